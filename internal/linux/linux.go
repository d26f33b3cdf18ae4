//go:build linux

// Package linux holds one EINTR-retrying wrapper per system call that
// shellsup makes directly, so no caller writes the retry loop by hand.
// Each returns the raw errno (compare with errors.Is or ==) wrapped as an
// *os.SyscallError naming the call, except where noted.
package linux

import (
	"os"

	"golang.org/x/sys/unix"
)

// retry runs f until it fails with something other than EINTR.
func retry(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

// Open is open(2) with O_CLOEXEC added.
func Open(path string, flags int, mode uint32) (int, error) {
	var fd int
	err := retry(func() (err error) { fd, err = unix.Open(path, flags|unix.O_CLOEXEC, mode); return err })
	if err != nil {
		return -1, os.NewSyscallError("open", err)
	}
	return fd, nil
}

// Read is read(2).
func Read(fd int, buf []byte) (int, error) {
	var n int
	err := retry(func() (err error) { n, err = unix.Read(fd, buf); return err })
	if err != nil {
		return 0, os.NewSyscallError("read", err)
	}
	return n, nil
}

// PidfdOpen is pidfd_open(2) without flags (PIDFD_NONBLOCK needs Linux
// 5.10; a pidfd that is never waited on does not need it).
func PidfdOpen(pid int) (int, error) {
	var fd int
	err := retry(func() (err error) { fd, err = unix.PidfdOpen(pid, 0); return err })
	if err != nil {
		return -1, os.NewSyscallError("pidfd_open", err)
	}
	return fd, nil
}

// PidfdSendSignal is pidfd_send_signal(2) with no siginfo and no flags.
func PidfdSendSignal(fd int, sig unix.Signal) error {
	if err := retry(func() error { return unix.PidfdSendSignal(fd, sig, nil, 0) }); err != nil {
		return os.NewSyscallError("pidfd_send_signal", err)
	}
	return nil
}

// Kill is kill(2).
func Kill(pid int, sig unix.Signal) error {
	if err := retry(func() error { return unix.Kill(pid, sig) }); err != nil {
		return os.NewSyscallError("kill", err)
	}
	return nil
}

// Waitid is waitid(2). It returns the bare errno (ECHILD is an answer,
// not a failure, to its callers).
func Waitid(idType int, id int, info *unix.Siginfo, options int) error {
	return retry(func() error { return unix.Waitid(idType, id, info, options, nil) })
}

// Wait4 is wait4(2). It returns the bare errno, like Waitid.
func Wait4(pid int, ws *unix.WaitStatus, options int) (int, error) {
	var got int
	err := retry(func() (err error) { got, err = unix.Wait4(pid, ws, options, nil); return err })
	return got, err
}

// Statfs is statfs(2).
func Statfs(path string, st *unix.Statfs_t) error {
	if err := retry(func() error { return unix.Statfs(path, st) }); err != nil {
		return os.NewSyscallError("statfs", err)
	}
	return nil
}
