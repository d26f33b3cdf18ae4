package supervisor

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/cgroup"
	"github.com/shellsup/shellsup/environ"
	"github.com/shellsup/shellsup/internal/linux"
	"github.com/shellsup/shellsup/pidns"
)

const bashPath = "/bin/bash"

// pipeSize is what shellsup asks of each output pipe: fewer, larger reads
// (the unprivileged ceiling, /proc/sys/fs/pipe-max-size, is 1 MiB by default).
const pipeSize = 1 << 20

// child is the running command: bash's pid and the read ends of its
// stdout and stderr.
type child struct {
	pid            int
	stdout, stderr *os.File
	input          *inputSink  // where input frames go, or nil (stdin /dev/null)
	shownPid       int         // bash's pid when pid is not bash's (PID-namespace init), else 0
	ns             *pidns.Init // the PID-namespace init, or nil
}

// execError is bash failing to start; the kernel's errno tells why.
type execError struct {
	errno       syscall.Errno
	bashMissing bool // ENOENT was about /bin/bash, not the working directory
	message     string
}

func (e *execError) Error() string { return e.message }

// exitCode is 127 when bash is missing, 126 when it cannot be executed.
func (e *execError) exitCode() int {
	if e.errno == syscall.ENOENT && e.bashMissing {
		return ExitNotFound
	}
	return ExitCannotExec
}

// spawn starts /bin/bash -lc COMMAND in a new session, in cfg.Cwd, with
// stdin /dev/null, its stdout and stderr on fresh pipes, no other fd, and
// an empty signal mask; born in leaf's cgroups when there is a leaf.
// shellsup is made non-dumpable first (see forbidDumps).
func spawn(cfg Config, leaf *cgroup.Leaf) (*child, error) {
	dir, dirDone, err := openWorkdir(cfg)
	if err != nil {
		return nil, err
	}
	defer dirDone()
	sio, err := openStdioFor(cfg)
	if err != nil {
		return nil, err
	}
	argv := shellArgv(cfg)
	env := childEnv(os.Environ(), cfg)
	attr := &syscall.ProcAttr{
		Dir:   dir,
		Env:   env,
		Files: sio.files(),
		Sys:   &syscall.SysProcAttr{Setsid: true},
	}
	if sio.tty != nil {
		attr.Sys.Setctty, attr.Sys.Ctty = true, 0 // the terminal on fd 0 becomes bash's
	}
	intoCgroup(attr.Sys, leaf)
	if cfg.User != nil {
		attr.Sys.Credential = cfg.User.Credential() // set in the child before chdir and exec
	}
	pid, err := forkFor(cfg, leaf, func() (int, error) { return forkExecUnmasked(argv, attr) })
	ignoreReservedSignals() // bash has its own dispositions now
	sio.forked(err == nil)
	var ue *userError
	var se *sandboxError
	if errors.As(err, &ue) || errors.As(err, &se) {
		return nil, err
	}
	if err != nil {
		return nil, describeUserExec(describeExecError(err, argv, env, cfg.Cwd), cfg)
	}
	raiseOOMScore(pid)
	return &child{pid: pid, stdout: sio.outR, stderr: sio.errR, input: sio.sink(pid)}, nil
}

// stdio is what the child gets as fds 0, 1 and 2 (/dev/null and the write
// ends of the output pipes), and the read ends shellsup keeps.
type stdio struct {
	devnull    *os.File
	outR, errR *os.File
	outW, errW int
	// With --pty: the terminal's slave, the child's fds 0, 1 and 2 (outR
	// is then the master, and errR a pipe already at EOF); with --stdin
	// pipe: devnull is the read end of the input pipe. in is shellsup's
	// end for input frames (the master, or the pipe's write end).
	tty     *os.File
	ttyDev  uint64
	in      *os.File
	inIsTTY bool
}

// openStdio opens /dev/null and the two output pipes.
func openStdio() (*stdio, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", os.DevNull, err)
	}
	outR, outW, err := outputPipe()
	if err != nil {
		devnull.Close() // read-only
		return nil, err
	}
	errR, errW, err := outputPipe()
	if err != nil {
		// Nothing was written to either end; a failed close loses nothing.
		devnull.Close()
		outR.Close()
		unix.Close(outW)
		return nil, err
	}
	return &stdio{devnull: devnull, outR: outR, errR: errR, outW: outW, errW: errW}, nil
}

// files are the child's fds 0, 1 and 2.
func (s *stdio) files() []uintptr {
	if s.tty != nil {
		return []uintptr{s.tty.Fd(), s.tty.Fd(), s.tty.Fd()}
	}
	return []uintptr{s.devnull.Fd(), uintptr(s.outW), uintptr(s.errW)}
}

// forked closes shellsup's copies of what the child has, once it has it:
// EOF comes when the tree's copies of the write ends are gone. If no child
// was made, the read ends go too. Nothing was written through any of them,
// so a failed close loses nothing.
func (s *stdio) forked(ok bool) {
	if s.tty != nil {
		s.tty.Close() // the tree's copies hold the terminal; the master reads EIO once they are gone
		if !ok {
			s.outR.Close()
			s.errR.Close()
		}
		return
	}
	s.devnull.Close()
	unix.Close(s.outW)
	unix.Close(s.errW)
	if !ok {
		s.outR.Close()
		s.errR.Close()
		if s.in != nil {
			s.in.Close()
		}
	}
}

// outputPipe makes a pipe whose read end is non-blocking and pollable by
// the Go runtime, and whose write end, for the child, stays blocking.
func outputPipe() (*os.File, int, error) {
	var p [2]int
	if err := linux.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, -1, err
	}
	// A bigger pipe halves the wake-ups of a chatty command; the kernel may
	// refuse (per-user pipe quota), and the default 64 KiB then serves.
	_, _ = linux.SetPipeSize(p[0], pipeSize)
	if err := linux.SetNonblock(p[0], true); err != nil {
		unix.Close(p[0]) // fresh and unused: a failed close loses nothing
		unix.Close(p[1])
		return nil, -1, err
	}
	return os.NewFile(uintptr(p[0]), "pipe"), p[1], nil
}

// forkExecUnmasked forks and execs with an empty signal mask in the child.
// The Go runtime forks with the mask of the calling thread (it saves it in
// runtime_BeforeFork and restores it in the child), so this thread's mask
// is cleared around the fork, whatever mask shellsup inherited.
func forkExecUnmasked(argv []string, attr *syscall.ProcAttr) (int, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var empty, old unix.Sigset_t
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &empty, &old); err != nil {
		return 0, os.NewSyscallError("rt_sigprocmask", err)
	}
	pid, err := syscall.ForkExec(argv[0], argv, attr)
	// Restoring the mask this thread had cannot fail with a valid set.
	_ = unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	return pid, err
}

// shellArgv is bash's command line: -lc runs a login shell, which reads
// the profiles; without a login shell, --norc -c reads none: --norc stops
// Debian's bash from reading ~/.bashrc when $SSH_CLIENT says sshd ran it.
// The command is always the last argument.
func shellArgv(cfg Config) []string {
	if !cfg.NoLogin {
		return []string{bashPath, "-lc", cfg.Command}
	}
	return []string{bashPath, "--norc", "-c", cfg.Command}
}

// childEnv is shellsup's environment as environ.Build makes it (HOME always
// set, the allow-list applied, credentials scrubbed and agent defaults
// added when asked for), with
// PWD set to the working directory, as os/exec does when it sets Dir, so
// the shell's $PWD is the directory as given rather than a stale inherited
// one. With --user, HOME, USER and LOGNAME are the user's. With a
// filesystem sandbox, TMPDIR is the private one.
func childEnv(env []string, cfg Config) []string {
	opts := environ.Options{Scrub: cfg.ScrubEnv, Agent: cfg.AgentEnv, Allow: cfg.EnvAllow}
	if cfg.AgentEnv {
		opts.Locale = environ.UTF8Locale("/")
	}
	built, _ := environ.Build(env, opts)
	out := make([]string, 0, len(built)+1)
	for _, kv := range built {
		if !strings.HasPrefix(kv, "PWD=") {
			out = append(out, kv)
		}
	}
	out = append(out, "PWD="+cfg.Cwd)
	if cfg.User != nil {
		out = cfg.User.Env(out)
	}
	return withTerm(sandboxEnv(out, cfg.Sandbox), cfg)
}

// describeExecError names why the kernel refused to run bash, with the
// sizes that matter for E2BIG.
func describeExecError(err error, argv, env []string, cwd string) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return fmt.Errorf("start %s: %w", bashPath, err)
	}
	// The child reports one errno for chdir and execve alike; a working
	// directory removed since validation is the other ENOENT.
	if st, serr := os.Stat(cwd); errno == syscall.ENOENT && (serr != nil || !st.IsDir()) {
		return &execError{errno: errno, message: fmt.Sprintf("chdir %q: the working directory vanished before bash started", cwd)}
	}
	msg := fmt.Sprintf("exec %s: %v (%s)", bashPath, errno, unix.ErrnoName(errno))
	if errno == syscall.E2BIG {
		argBytes, envBytes, longest := 0, 0, 0
		for _, a := range argv {
			argBytes += len(a) + 1
		}
		for _, e := range env {
			envBytes += len(e) + 1
			longest = max(longest, len(e)+1)
		}
		msg += fmt.Sprintf(": the command is %d bytes, the environment %d bytes in %d variables (longest %d bytes), %d bytes in all; the kernel allows at most %d bytes per string and %d bytes of arguments and environment in all",
			len(argv[len(argv)-1]), envBytes, len(env), longest, argBytes+envBytes, 131072, argMax())
	}
	return &execError{errno: errno, bashMissing: errno == syscall.ENOENT, message: msg}
}

// argMax is the kernel's limit on arguments plus environment
// (bprm_stack_limits): a quarter of the stack rlimit, at most 6 MiB (three
// quarters of _STK_LIM) and at least 128 KiB.
func argMax() uint64 {
	const ceiling, floor = 6 << 20, 128 << 10
	var rl unix.Rlimit
	if err := linux.Getrlimit(unix.RLIMIT_STACK, &rl); err != nil {
		return ceiling // only explains an E2BIG: assume the largest limit
	}
	return max(min(rl.Cur/4, ceiling), floor)
}
