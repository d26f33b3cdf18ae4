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
