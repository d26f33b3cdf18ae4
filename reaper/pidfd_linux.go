package reaper

import (
	"errors"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// probePidfd checks once, by trying, that pidfd_open and
// pidfd_send_signal work on this kernel (5.3+).
var probePidfd = sync.OnceValue(func() error {
	fd, err := pidfdOpen(os.Getpid())
	if err != nil {
		return &UnavailableError{What: "probing pidfd support", Err: err}
	}
	defer unix.Close(fd) // probe only
	if err := pidfdSignal(fd, 0); err != nil {
		return &UnavailableError{What: "probing pidfd support", Err: err}
	}
	return nil
})

func pidfdOpen(pid int) (int, error) {
	for {
		fd, err := unix.PidfdOpen(pid, 0) // PIDFD_NONBLOCK would need Linux 5.10; the pidfd is never waited on
		if err != unix.EINTR {
			if err != nil {
				return -1, os.NewSyscallError("pidfd_open", err)
			}
			return fd, nil
		}
	}
}

func pidfdSignal(fd int, sig unix.Signal) error {
	for {
		err := unix.PidfdSendSignal(fd, sig, nil, 0)
		if err != unix.EINTR {
			if err != nil {
				return os.NewSyscallError("pidfd_send_signal", err)
			}
			return nil
		}
	}
}

// errReused: the pid now names a different process than the scan saw.
var errReused = errors.New("pid was reused by another process")

// openVerified returns a pidfd for p, verified to refer to the process the
// scan saw: the pidfd is opened first, then /proc/PID/stat is read again and
// its start time compared. If they match, the pidfd pins that process (a
// pidfd never follows a reused pid), so every later signal through it is
// safe.
func openVerified(d *procDir, p proc) (int, error) {
	fd, err := pidfdOpen(p.pid)
	if err != nil {
		return -1, err
	}
	now, err := d.stat(p.pid)
	if err != nil {
		unix.Close(fd) // unused
		return -1, err
	}
	// Same start time, and still a child of the parent the scan saw (or of
	// shellsup, if that parent died since): a pid reused within the same
	// clock tick by a stranger fails the parent check.
	if now.start != p.start || (now.ppid != p.ppid && now.ppid != os.Getpid()) {
		unix.Close(fd) // unused
		return -1, errReused
	}
	return fd, nil
}

// kill sends sig to pid. Only for children of shellsup, with the Waiter
// pinned (see Waiter.Pin): then the pid cannot have been reused.
func kill(pid int, sig unix.Signal) error {
	for {
		err := unix.Kill(pid, sig)
		if err != unix.EINTR {
			if err != nil {
				return os.NewSyscallError("kill", err)
			}
			return nil
		}
	}
}
