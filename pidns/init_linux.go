package pidns

import (
	"encoding/binary"
	"errors"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/credential"
	"github.com/shellsup/shellsup/internal/linux"
	"github.com/shellsup/shellsup/request"
	"github.com/shellsup/shellsup/sandbox"
)

// How the init is recognised: this argv[0], this key as the first argument,
// the command as the second, and pid 1. Nothing else turns shellsup into
// the init.
const (
	initArgv0 = "shellsup-pidns-init"
	initKey   = "shellsup-pidns-init-7f3a91c2-v1"
	// initKeyNoLogin instead of initKey: bash runs without a login shell.
	initKeyNoLogin = initKey + "-no-login"
	// initComm is the init's name in ps (the kernel keeps 15 bytes).
	initComm = "shellsup-init"
)

// statusFd is the init's end of the status pipe, the write end.
const statusFd = 3

const bashPath = "/bin/bash"

// Records on the status pipe: 8 bytes, the kind then a value, little endian.
const (
	recStarted    = 1 // value: 0, or the errno of starting bash
	recExited     = 2 // value: bash's raw wait status
	recPrivate    = 3 // value: errno of making the mounts private
	recMountProc  = 4 // value: errno of mounting /proc
	recDropCaps   = 5 // value: errno of dropping the ambient capabilities
	recDeathsig   = 6 // value: errno of PR_SET_PDEATHSIG
	recDropUser   = 7 // value: errno of preparing the thread that forks bash as the --user user
	recLoopback   = 8 // value: errno of bringing lo up (--no-network)
	recSandbox    = 9 // value: errno of enforcing the sandbox's Landlock rules
	recordSize    = 8
	exitSetupFail = 125
)

// MaybeInit turns this process into the PID-namespace init if it was
// started as one, and never returns then. Call it first thing in main. A
// fourth argument is the --user user, in credential's wire form, or ""; a
// fifth the sandbox policy, in sandbox's wire form.
func MaybeInit() {
	if len(os.Args) < 3 || len(os.Args) > 5 || os.Args[0] != initArgv0 || os.Getpid() != 1 {
		return
	}
	var u *credential.User
	var sb *sandbox.Policy
	var err error
	if len(os.Args) >= 4 && os.Args[3] != "" {
		if u, err = credential.FromWire(os.Args[3]); err != nil {
			os.Exit(exitSetupFail)
		}
	}
	if len(os.Args) == 5 {
		if sb, err = sandbox.FromWire(os.Args[4]); err != nil {
			os.Exit(exitSetupFail)
		}
	}
	switch os.Args[1] {
	case initKey:
		os.Exit(runInit(os.Args[2], true, u, sb))
	case initKeyNoLogin:
		os.Exit(runInit(os.Args[2], false, u, sb))
	}
}

// runInit is the init's whole life; it returns the init's exit code, bash's
// status as shellsup reports it (N, or 128+N for signal N).
func runInit(command string, login bool, u *credential.User, sb *sandbox.Policy) int {
	status, code := armInit()
	if status == nil {
		return code
	}
	// The signals the Go runtime would act on are taken (see
	// fatalSignals): pid 1 gets only the signals it handles, and the
	// runtime drops every other one, so nothing the command sends can
	// end the init. Writes to a shellsup that is gone then fail with EPIPE.
	sigs := make(chan os.Signal, 32)
	signal.Notify(sigs, fatalSignals...)
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return setupFailed(status, recPrivate, err)
	}
	// The host's /proc goes first where it may (as root; in a user
	// namespace it is locked in place, and bash has no capability to
	// unmount what covers it), so unmounting the new one reveals nothing.
	_ = unix.Unmount("/proc", unix.MNT_DETACH)
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return setupFailed(status, recMountProc, err)
	}
	if err := dropInheritedCaps(); err != nil {
		return setupFailed(status, recDropCaps, err)
	}
	if sb != nil && sb.NetNS {
		if err := sandbox.LoopbackUp(); err != nil {
			return setupFailed(status, recLoopback, errnoOf(err))
		}
	}
	bash, rec, err := forkBash(command, login, u, sb)
	if rec != 0 {
		return setupFailed(status, rec, errnoOf(err))
	}
	if err != nil {
		errno, _ := err.(syscall.Errno)
		writeRecord(status, recStarted, uint32(errno))
		if errno == syscall.ENOENT {
			return 127
		}
		return 126
	}
	pidfd, err := unix.PidfdOpen(bash, 0)
	if err != nil {
		pidfd = -1 // signals are then not forwarded; shellsup's walk still reaches bash
	}
	writeRecord(status, recStarted, 0)
	quietStdio()
	go forward(sigs, pidfd)
	return reapAll(status, bash)
}

// armInit is the init's first step: the status pipe kept from bash, the
// init non-dumpable and tied to shellsup's life. It returns the status
// pipe, or nil and the exit code when the init cannot go on.
func armInit() (*os.File, int) {
	// The status pipe must not reach bash: a command holding it could
	// write status records of its own.
	unix.CloseOnExec(statusFd)
	// Non-dumpable, as shellsup is: a command of the same user cannot open
	// /proc/1/fd/* (the status pipe) or ptrace the init. bash's exec makes
	// bash dumpable again.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return nil, exitSetupFail
	}
	status := os.NewFile(statusFd, "status")
	_ = setName(initComm) // what ps shows for pid 1; cosmetic
	// Under memory pressure the kernel should pick the command, not
	// shellsup: bash inherits this (raising needs no privilege).
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte(strconv.Itoa(request.WorkloadOOMScore)), 0) // best effort, as outside the namespace
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return nil, setupFailed(status, recDeathsig, err)
	}
	if !shellsupAlive() {
		return nil, exitSetupFail // shellsup died before the death signal was armed
	}
	return status, 0
}

// fatalSignals are the signals the Go runtime acts on when the program has
// not asked for them (os/signal, "Default behavior of signals in Go
// programs"): SIGHUP, SIGINT and SIGTERM end it; SIGQUIT, SIGILL, SIGTRAP,
// SIGABRT, SIGSTKFLT and SIGSYS end it with a stack dump; a SIGBUS, SIGFPE
// or SIGSEGV sent by a process does too. SIGPIPE ends it on a write to fd 1
// or 2. The runtime catches every other signal and takes no action, or
// leaves it at SIG_DFL, which the kernel does not deliver to pid 1 from
// inside its namespace. Taking all 64 would cost two thread hand-offs per
// signal (about 1 ms at every --pidns start), for no more protection.
var fatalSignals = []os.Signal{
	unix.SIGHUP, unix.SIGINT, unix.SIGTERM,
	unix.SIGQUIT, unix.SIGILL, unix.SIGTRAP, unix.SIGABRT, unix.SIGSTKFLT, unix.SIGSYS,
	unix.SIGBUS, unix.SIGFPE, unix.SIGSEGV,
	unix.SIGPIPE,
}

// shellsupAlive: shellsup holds the only read end of the status pipe, so
// the write end polls POLLERR once shellsup is gone.
func shellsupAlive() bool {
	fds := []unix.PollFd{{Fd: statusFd, Events: unix.POLLOUT}}
	_, err := linux.Poll(fds, 0)
	return err == nil && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) == 0
}

// forkBash starts bash; with --user or a sandbox on a thread of its own
// (sandbox.OnThread: never the main one, never given back) that
// credential.Drop and sandbox.Restrict prepare, which cannot be undone.
// rec names the preparation that failed, or is 0.
func forkBash(command string, login bool, u *credential.User, sb *sandbox.Policy) (bash int, rec uint32, err error) {
	if u == nil && sb == nil {
		bash, err = startBash(command, login, nil)
		return bash, 0, err
	}
	sandbox.OnThread(func() {
		if u != nil {
			if err = credential.Drop(u); err != nil {
				rec = recDropUser
				return
			}
		}
		if sb != nil {
			if err = sandbox.Restrict(sb); err != nil {
				rec = recSandbox
				return
			}
		}
		bash, err = startBash(command, login, u)
	})
	return bash, rec, err
}

// errnoOf is the errno inside err, or 0.
func errnoOf(err error) syscall.Errno {
	var errno syscall.Errno
	errors.As(err, &errno)
	return errno
}

func setupFailed(status *os.File, kind uint32, err error) int {
	errno, _ := err.(syscall.Errno)
	writeRecord(status, kind, uint32(errno))
	return exitSetupFail
}

func writeRecord(status *os.File, kind, value uint32) {
	var b [recordSize]byte
	binary.LittleEndian.PutUint32(b[:4], kind)
	binary.LittleEndian.PutUint32(b[4:], value)
	_, _ = status.Write(b[:]) // shellsup gone: nobody to tell, and the death signal is on its way
}

// startBash starts /bin/bash -lc COMMAND (without login, /bin/bash --norc
// -c COMMAND) in a new session with the init's stdio, environment and
// working directory, and an empty signal mask; with u, as u, whose
// credentials are set in the child before it changes (as u) to the
// working directory.
func startBash(command string, login bool, u *credential.User) (int, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// Capabilities belong to each thread, and bash gets those of the thread
	// that forks it: this one, which the runtime may have started before
	// runInit dropped them on another.
	if err := dropInheritedCaps(); err != nil {
		return 0, err
	}
	var empty, old unix.Sigset_t
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &empty, &old); err != nil {
		return 0, err
	}
	argv := []string{bashPath, "-lc", command}
	if !login {
		argv = []string{bashPath, "--norc", "-c", command}
	}
	attr := &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	}
	if isTerminal(0) {
		attr.Sys.Setctty, attr.Sys.Ctty = true, 0 // --pty: the terminal becomes bash's
	}
	if u != nil {
		attr.Sys.Credential = u.Credential()
		// chdir as the user, so a directory the user may not reach is
		// refused as it is outside the namespace (EACCES).
		wd, err := os.Getwd()
		if err != nil {
			_ = unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
			return 0, err
		}
		attr.Dir = wd
	}
	pid, err := syscall.ForkExec(bashPath, argv, attr)
	_ = unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	return pid, err
}

// quietStdio points the init's stdin, stdout and stderr at /dev/null, so
// that the output pipes reach EOF (a --pty terminal's master EIO) when the
// command's processes are gone, whether or not the init is.
func quietStdio() {
	fd, err := unix.Open(os.DevNull, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	_ = unix.Dup2(fd, 0)
	_ = unix.Dup2(fd, 1)
	_ = unix.Dup2(fd, 2)
	unix.Close(fd)
}

// forward passes on to bash the signals that cancel a run (SIGTERM,
// SIGINT, SIGHUP), through the pidfd: bash's pid is never reused under it.
// Every other signal is dropped, so the command cannot use the init to
// signal itself in ways it could not anyway.
func forward(sigs <-chan os.Signal, pidfd int) {
	for sig := range sigs {
		switch sig {
		case unix.SIGTERM, unix.SIGINT, unix.SIGHUP:
			if pidfd >= 0 {
				_ = unix.PidfdSendSignal(pidfd, sig.(syscall.Signal), nil, 0) // ESRCH: bash is gone
			}
		}
	}
}

// reapAll reaps every process of the namespace, reports bash's status as
// soon as bash is reaped, and returns when no child is left.
func reapAll(status *os.File, bash int) int {
	code := exitSetupFail
	for {
		var ws unix.WaitStatus
		pid, err := linux.Wait4(-1, &ws, unix.WALL)
		switch {
		case err != nil: // ECHILD: the namespace is empty but for the init
			return code
		case pid == bash:
			code = exitCodeOf(ws)
			writeRecord(status, recExited, uint32(ws))
		}
	}
}

func exitCodeOf(ws unix.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// dropInheritedCaps clears the ambient and inheritable capabilities the
// init was given to mount /proc, so none reaches bash: bash then has
// exactly what its uid gives it on exec.
func dropInheritedCaps() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return err
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	return unix.Capset(&hdr, &data[0])
}

// setName sets the init's comm (the kernel's name for it in ps).
func setName(name string) error {
	b := append([]byte(name), 0)
	return unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0)
}

// isTerminal reports whether fd is a terminal (--pty gives the init the
// terminal's slave as fd 0).
func isTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}
