package supervisor

import (
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"unsafe"

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
	cancel chan os.Signal // SIGTERM, SIGINT, SIGHUP
	ignore chan os.Signal // SIGPIPE and job-control signals
}

// notifySignals registers for signals before the first fork. (SIGCHLD is
// not among them: the reaper blocks in waitid instead.) Notify (never
// Ignore) matters for the command's hygiene: a signal with a Go handler is
// reset to SIG_DFL in the child, whereas an inherited SIG_IGN that Go does
// not take over (SIGHUP and SIGINT) would leak into bash. SIGPIPE is
// handled so a write to a closed stdout returns EPIPE instead of killing
// shellsup before cleanup. Any other inherited SIG_IGN (the job-control
// signals, which Go leaves alone) is reset to SIG_DFL by
// resetIgnoredSignals, so shellsup, like any program, can be stopped with
// Ctrl-Z.
func notifySignals() *signalSet {
	s := &signalSet{
		cancel: make(chan os.Signal, 4),
		ignore: make(chan os.Signal, 1),
	}
	signal.Notify(s.cancel, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// Received and dropped (the channel is never read): a closed stdout is
	// learnt from EPIPE.
	signal.Notify(s.ignore, syscall.SIGPIPE)
	resetIgnoredSignals()
	return s
}

// resetIgnoredSignals sets SIG_DFL for any signal still ignored after
// notifySignals: those the Go runtime installs no handler for unless asked
// (SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT) and the ones it never handles (32
// and 34, which glibc and musl reserve), whose inherited SIG_IGN would
// otherwise reach bash.
func resetIgnoredSignals() {
	for sig := 1; sig <= 64; sig++ {
		if sig == int(unix.SIGKILL) || sig == int(unix.SIGSTOP) {
			continue
		}
		var old sigaction
		if rtSigaction(sig, nil, &old) != nil || old.handler != sigIgn {
			continue
		}
		dfl := sigaction{handler: sigDfl}
		_ = rtSigaction(sig, &dfl, nil) // best effort: an unknown signal number just stays as it was
	}
}

const (
	sigDfl = 0
	sigIgn = 1
)

// sigaction is the kernel's struct sigaction on amd64 and arm64.
type sigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

func rtSigaction(sig int, act, old *sigaction) error {
	_, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(act)), uintptr(unsafe.Pointer(old)), 8, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
