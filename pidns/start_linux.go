package pidns

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/credential"
	"github.com/shellsup/shellsup/internal/linux"
	"github.com/shellsup/shellsup/internal/procstat"
	"github.com/shellsup/shellsup/sandbox"
)

// Spec is what the init needs to start bash.
type Spec struct {
	Command string
	NoLogin bool // bash --norc -c instead of bash -lc
	Cwd     string
	Env     []string
	// Stdio are the fds the init, and so bash, gets as 0, 1 and 2.
	Stdio [3]uintptr
	// CgroupFD, when UseCgroupFD is set, is a cgroup v2 directory the init
	// is started in (CLONE_INTO_CGROUP), for a cgroup tier under this one.
	UseCgroupFD bool
	CgroupFD    int
	// User, when not nil, is who bash runs as (--user): the init, root,
	// forks bash on a thread prepared by credential.Drop, with the user's
	// credentials, chdir'ing to the working directory as the user.
	User *credential.User
	// Sandbox, when not nil, is enforced by the init on the thread that
	// forks bash; with NetNS set the namespaces include a network one,
	// whose loopback the init brings up.
	Sandbox *sandbox.Policy
}

// UnavailableError: the namespaces could not be made, or the init could
// not set them up. Nothing of the command ran.
type UnavailableError struct {
	What string
	Err  error
}

func (e *UnavailableError) Error() string { return e.What + ": " + e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// ExecError: the init is up but bash could not be started; Errno says why.
// Nothing of the command ran.
type ExecError struct{ Errno syscall.Errno }

func (e *ExecError) Error() string { return fmt.Sprintf("exec %s: %v", bashPath, e.Errno) }

// closeWait bounds how long Close waits for the status pipe's last record
// once the namespace is gone (the init's exit closes it at once).
const closeWait = time.Second

// Init is a running PID-namespace init, seen from shellsup. It is a
// reaper.Tier.
type Init struct {
	pid     int // the init's pid in shellsup's namespace
	bashPid int // bash's pid in shellsup's namespace, or the init's if it was not seen
	pidfd   int
	bashFD  int // a pidfd of bash, for StopLeader; -1 without one
	status  *os.File
	exited  chan struct{} // closed once bash's status is known or the init is gone
	mu      sync.Mutex
	ws      unix.WaitStatus
	known   bool
	closing sync.Once
}

// Start starts the init in new PID and mount namespaces (and a user
// namespace mapping the caller's own uid and gid, unless the caller is
// root) and returns once bash is running inside, or with the reason it is
// not: an *UnavailableError or an *ExecError, or the error of the fork
// itself. The caller must not reap the init before Start returns; on error
// no process is left.
func Start(spec Spec) (*Init, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, os.NewSyscallError("pipe2", err)
	}
	status := os.NewFile(uintptr(p[0]), "pidns-status")
	pid, err := forkInit(spec, p[1])
	unix.Close(p[1]) // the init holds the only write end now
	if err != nil {
		status.Close()
		return nil, describeForkError(err)
	}
	in := &Init{pid: pid, bashPid: pid, bashFD: -1, status: status, exited: make(chan struct{})}
	if err := in.awaitStart(); err != nil {
		status.Close()
		reap(pid)
		return nil, err
	}
	if in.pidfd, err = unix.PidfdOpen(pid, 0); err != nil { // an unreaped child: the pid is still the init's
		in.pidfd = -1
	}
	if b := firstChild(pid); b > 0 {
		in.bashPid = b
		in.bashFD = openChildPidfd(pid, b)
	}
	go in.readStatus()
	return in, nil
}

// forkInit execs this binary as the init, in new namespaces, with the same
// empty signal mask the normal spawn gives bash.
func forkInit(spec Spec, statusW int) (int, error) {
	sys := &syscall.SysProcAttr{Setsid: true, Cloneflags: unix.CLONE_NEWPID | unix.CLONE_NEWNS,
		UseCgroupFD: spec.UseCgroupFD, CgroupFD: spec.CgroupFD}
	if uid := os.Geteuid(); uid != 0 {
		gid := os.Getegid()
		sys.Cloneflags |= unix.CLONE_NEWUSER
		sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		sys.GidMappingsEnableSetgroups = false
		// The init is not root in its user namespace: it keeps the one
		// capability it needs to mount /proc across exec, and drops it
		// before bash starts.
		sys.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
		if spec.Sandbox != nil && spec.Sandbox.NetNS {
			sys.AmbientCaps = append(sys.AmbientCaps, unix.CAP_NET_ADMIN) // to bring lo up
		}
	}
	if spec.Sandbox != nil && spec.Sandbox.NetNS {
		sys.Cloneflags |= unix.CLONE_NEWNET
	}
	attr := &syscall.ProcAttr{
		Dir:   spec.Cwd,
		Env:   spec.Env,
		Files: []uintptr{spec.Stdio[0], spec.Stdio[1], spec.Stdio[2], uintptr(statusW)},
		Sys:   sys,
	}
	runtime.LockOSThread() // also keeps the init's parent-death signal tied to a live thread
	defer runtime.UnlockOSThread()
	var empty, old unix.Sigset_t
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &empty, &old); err != nil {
		return 0, os.NewSyscallError("rt_sigprocmask", err)
	}
	key := initKey
	if spec.NoLogin {
		key = initKeyNoLogin
	}
	argv := []string{initArgv0, key, spec.Command}
	if spec.User != nil || spec.Sandbox != nil {
		argv = append(argv, "")
		if spec.User != nil {
			argv[3] = spec.User.Wire()
		}
	}
	if spec.Sandbox != nil {
		argv = append(argv, spec.Sandbox.Wire())
	}
	pid, err := syscall.ForkExec("/proc/self/exe", argv, attr)
	_ = unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	return pid, err
}

// describeForkError: E2BIG is the command's size, as it would be for bash;
// anything else means the namespaces could not be had.
func describeForkError(err error) error {
	if errors.Is(err, syscall.E2BIG) {
		return &ExecError{Errno: syscall.E2BIG}
	}
	what := "creating a PID namespace for --pidns"
	if os.Geteuid() != 0 {
		what = "creating a user and PID namespace for --pidns"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if hint, ok := forkHints[errno]; ok {
			err = fmt.Errorf("%w (%s): %s", err, unix.ErrnoName(errno), hint)
		}
	}
	return &UnavailableError{What: what, Err: err}
}

// forkHints say what the usual refusals of clone(CLONE_NEWPID…) mean.
var forkHints = map[syscall.Errno]string{
	syscall.ENOSPC: "a namespace limit is reached (/proc/sys/user/max_pid_namespaces, max_user_namespaces or max_mnt_namespaces)",
	syscall.EPERM:  "not permitted here (unprivileged user namespaces disabled by kernel.unprivileged_userns_clone or a security module, or a seccomp filter)",
	syscall.EINVAL: "this kernel does not support the namespaces",
	syscall.EUSERS: "too deeply nested user namespaces",
}

// awaitStart reads the init's first record.
func (in *Init) awaitStart() error {
	kind, value, err := readRecord(in.status)
	if err != nil {
		return &UnavailableError{What: "starting the PID-namespace init", Err: fmt.Errorf("it exited before bash started: %w", err)}
	}
	errno := syscall.Errno(value)
	switch kind {
	case recStarted:
		if errno != 0 {
			return &ExecError{Errno: errno}
		}
		return nil
	case recPrivate:
		return &UnavailableError{What: "making the mounts of the PID namespace private", Err: errno}
	case recMountProc:
		return &UnavailableError{What: "mounting /proc in the PID namespace", Err: errno}
	case recDropCaps:
		return &UnavailableError{What: "dropping the init's capabilities", Err: errno}
	case recDeathsig:
		return &UnavailableError{What: "setting the init's parent-death signal", Err: errno}
	case recDropUser:
		return &UnavailableError{What: "preparing the init's thread to start bash as the --user user (capabilities, no_new_privs)", Err: errno}
	case recLoopback:
		return &UnavailableError{What: "bringing lo up in the network namespace for --no-network", Err: errno}
	case recSandbox:
		return &UnavailableError{What: "enforcing the sandbox's Landlock rules (and the seccomp filter beside the TCP rules) in the init", Err: errno}
	}
	return &UnavailableError{What: "starting the PID-namespace init", Err: fmt.Errorf("unexpected record %d", kind)}
}

func readRecord(r io.Reader) (kind, value uint32, err error) {
	var b [recordSize]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, 0, err
	}
	return binary.LittleEndian.Uint32(b[:4]), binary.LittleEndian.Uint32(b[4:]), nil
}

// reap collects an init that failed before the run began (the Waiter does
// not exist yet).
func reap(pid int) {
	var ws unix.WaitStatus
	_, _ = linux.Wait4(pid, &ws, unix.WALL)
}

// firstChild is the init's child, bash, as shellsup's namespace numbers it
// (0 if bash is already gone). Every thread's children file is read: bash
// was forked from whichever thread the init's runtime chose.
func firstChild(pid int) int {
	task := fmt.Sprintf("/proc/%d/task", pid)
	d, err := os.Open(task)
	if err != nil {
		return 0
	}
	// The thread ids only: a glob of task/*/children would list every
	// thread's directory too (0.6 ms at start-up).
	tids, _ := d.Readdirnames(-1)
	d.Close() // read-only
	for _, tid := range tids {
		b, err := os.ReadFile(task + "/" + tid + "/children")
		if err != nil {
			continue
		}
		if fields := strings.Fields(string(b)); len(fields) > 0 {
			n, _ := strconv.Atoi(fields[0])
			return n
		}
	}
	return 0
}

// readStatus waits for bash's status, or for the init to go (EOF: the
// init's end is closed only by its death). If Close gives up first, bash's
// end stays unknown.
func (in *Init) readStatus() {
	kind, value, err := readRecord(in.status)
	switch {
	case err == nil && kind == recExited:
		in.mu.Lock()
		in.ws, in.known = unix.WaitStatus(value), true
		in.mu.Unlock()
	case !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF):
		return // closed under it: nothing is known
	}
	close(in.exited)
}

// Pid is the init's pid (shellsup's child).
func (in *Init) Pid() int { return in.pid }

// BashPid is bash's pid in shellsup's PID namespace.
func (in *Init) BashPid() int { return in.bashPid }

// LeaderExited is closed once bash has exited or the init is gone.
func (in *Init) LeaderExited() <-chan struct{} { return in.exited }

// LeaderDone reports whether bash has exited, whether or not the init's
// report has arrived: bash is the init's child, not shellsup's, so besides
// the report it asks /proc about bash's host pid — a zombie the init has
// not reaped yet, or gone (reaped, the report on its way), has exited.
func (in *Init) LeaderDone() bool {
	select {
	case <-in.exited:
		return true
	default:
	}
	if in.bashPid == in.pid {
		return false // bash was never seen: only the report can tell
	}
	st, err := procstat.Read("/proc", in.bashPid)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	if st.PPid != in.pid {
		return true // no longer the init's: reaped, the pid reused
	}
	// A zombie leader is a dead process only once its last thread is gone:
	// a program whose main thread exits (pthread_exit) while others run
	// shows "Z" for the leader and lives on.
	return st.State == 'Z' && !procstat.OtherThreads("/proc", in.bashPid)
}

// LeaderStatus is bash's wait status; valid once LeaderExited is closed.
// If the init died before it could report it, bash was killed with the
// namespace by the kernel: SIGKILL.
func (in *Init) LeaderStatus() unix.WaitStatus {
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.known {
		return unix.WaitStatus(unix.SIGKILL)
	}
	return in.ws
}

// Name is reported in start.containment.
func (in *Init) Name() string { return "pidns" }

// Term does nothing: the /proc walk signals every process of the
// namespace (they are shellsup's descendants), and the init passes its own
// SIGTERM on to bash.
func (in *Init) Term() error { return nil }

// Kill sends SIGKILL to the init: the kernel then kills every process of
// the namespace at once.
func (in *Init) Kill() error {
	if in.pidfd < 0 {
		return errors.New("no pidfd for the PID-namespace init")
	}
	if err := unix.PidfdSendSignal(in.pidfd, unix.SIGKILL, nil, 0); err != nil && err != unix.ESRCH {
		return os.NewSyscallError("pidfd_send_signal", err)
	}
	return nil
}

// Close releases the pidfd and the status pipe, once bash's status is in
// (or the wait for it, bounded, is over).
func (in *Init) Close() error {
	in.closing.Do(func() {
		select {
		case <-in.exited:
		case <-time.After(closeWait):
		}
		if in.pidfd >= 0 {
			unix.Close(in.pidfd)
		}
		if in.bashFD >= 0 {
			unix.Close(in.bashFD)
		}
		in.status.Close()
	})
	return nil
}

// openChildPidfd opens a pidfd of bash, the init's child b, and keeps it
// only if b is still the init's child once the pidfd is open (so the pidfd
// names bash, not a process that took a freed pid); else -1.
func openChildPidfd(init, b int) int {
	fd, err := unix.PidfdOpen(b, 0)
	if err != nil {
		return -1
	}
	if st, err := procstat.Read("/proc", b); err != nil || st.PPid != init {
		unix.Close(fd)
		return -1
	}
	return fd
}

// StopLeader settles a tie between bash's exit and a deadline or a cancel,
// as the Waiter's does for a bash that is shellsup's child: it stops bash
// (SIGSTOP through its pidfd) and reports whether bash exited before the
// stop took hold. within bounds the wait for the stop.
func (in *Init) StopLeader(within time.Duration) (exited bool) {
	if in.bashFD < 0 || unix.PidfdSendSignal(in.bashFD, unix.SIGSTOP, nil, 0) != nil {
		return in.LeaderDone() // ESRCH: bash is gone
	}
	for deadline := time.Now().Add(within); ; time.Sleep(50 * time.Microsecond) {
		if in.LeaderDone() {
			return true
		}
		st, err := procstat.Read("/proc", in.bashPid)
		if err == nil && st.State == 'T' || time.Now().After(deadline) {
			return false
		}
	}
}
