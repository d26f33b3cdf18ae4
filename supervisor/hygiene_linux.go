package supervisor

import (
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// closeInheritedFds marks every fd above 2 close-on-exec, so only stdin,
// stdout and stderr reach the command, whatever shellsup inherited
// (close_range needs Linux 5.11; older kernels take the /proc/self/fd walk).
func closeInheritedFds() error {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	dir, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range dir {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		// The directory's own fd is among them; marking it is harmless.
		unix.CloseOnExec(fd)
	}
	return nil
}

// signalSet holds the channels of every signal shellsup handles.
type signalSet struct {
	cancel chan os.Signal // every catchable signal whose default action ends the process
	ignore chan os.Signal // SIGPIPE
}

// cancelSignals are the signals whose default action terminates the
// process or dumps core and that the Go runtime lets a program catch: each
// one cancels the run, so no signal a command can send ends shellsup
// before its cleanup, and none makes the runtime dump its goroutines
// (SIGQUIT, SIGTRAP, SIGSYS, SIGSTKFLT, SIGILL and SIGABRT would). A
// SIGSEGV, SIGBUS or SIGFPE raised by a real fault still panics: only one
// sent by a process is delivered here. SIGPROF stays the runtime's (its
// profiler consumes it; it never ends shellsup). Real-time signals 32 to
// 34 are reserved by the runtime and cannot be caught; ignoreReservedSignals
// takes care of them. The signals whose default action is to do nothing
// (SIGCHLD, SIGCONT, SIGURG, SIGWINCH) or to stop (SIGTSTP, SIGTTIN,
// SIGTTOU) are left alone.
func cancelSignals() []os.Signal {
	sigs := []os.Signal{
		unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGILL, unix.SIGTRAP, unix.SIGABRT,
		unix.SIGBUS, unix.SIGFPE, unix.SIGUSR1, unix.SIGSEGV, unix.SIGUSR2, unix.SIGALRM,
		unix.SIGTERM, unix.SIGSTKFLT, unix.SIGXCPU, unix.SIGXFSZ, unix.SIGVTALRM, unix.SIGIO,
		unix.SIGPWR, unix.SIGSYS,
	}
	for sig := firstCatchableRT; sig <= lastRT; sig++ {
		sigs = append(sigs, syscall.Signal(sig))
	}
	return sigs
}

// The real-time signals: 32 to 34 belong to the runtime (and to the C
// libraries it stands in for), 35 to 64 can be caught.
const (
	firstReservedRT  = 32
	firstCatchableRT = 35
	lastRT           = 64
)

// notifySignals registers for signals before the first fork. (SIGCHLD is
// not among them: the reaper blocks in waitid instead.) Notify (never
// Ignore) matters for the command's hygiene: a signal with a Go handler is
// reset to SIG_DFL in the child, whereas an inherited SIG_IGN that Go does
// not take over (SIGHUP and SIGINT) would leak into bash. SIGPIPE is
// handled so a write to a closed stdout returns EPIPE instead of killing
// shellsup before cleanup. Any other inherited SIG_IGN (the job-control
// signals, which Go leaves alone) is reset to SIG_DFL by
// resetIgnoredSignals, so shellsup, like any program, can be stopped with
// Ctrl-Z. The cancel channel is small and the reader only queues a reason
// without blocking, so a flood of signals costs shellsup nothing: the
// runtime coalesces pending signals and the first cause wins.
func notifySignals() *signalSet {
	s := &signalSet{
		cancel: make(chan os.Signal, 4),
		ignore: make(chan os.Signal, 1),
	}
	signal.Notify(s.cancel, cancelSignals()...)
	// Received and dropped (the channel is never read): a closed stdout is
	// learnt from EPIPE.
	signal.Notify(s.ignore, syscall.SIGPIPE)
	resetIgnoredSignals()
	quietChildExits()
	return s
}

// forbidDumps makes shellsup non-dumpable before the command exists: its
// /proc entries then belong to root, so a command of the same unprivileged
// user can neither open /proc/<shellsup>/fd/* (to forge frames on the
// frames channel or to hold its control pipe open) nor read its memory nor
// ptrace it. execve makes bash dumpable again, so the command's own
// processes stay ordinary. A root command is not stopped by this.
func forbidDumps() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(PR_SET_DUMPABLE)", err)
	}
	return nil
}
