package reaper

import (
	"errors"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Kernel features used, with the Linux version that added them:
//
//	PR_SET_CHILD_SUBREAPER   3.4
//	pidfd_open               5.3
//	pidfd_send_signal        5.1
//
// Setup refuses to run on a kernel without them.

// becomeSubreaper sets PR_SET_CHILD_SUBREAPER on this process and reads it
// back, so orphaned descendants are reparented to shellsup instead of init.
func becomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return &UnavailableError{What: "set child subreaper", Err: os.NewSyscallError("prctl", err)}
	}
	var on int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&on)), 0, 0, 0); err != nil {
		return &UnavailableError{What: "read child subreaper", Err: os.NewSyscallError("prctl", err)}
	}
	if on != 1 {
		return &UnavailableError{What: "set child subreaper", Err: errors.New("the subreaper bit did not stick")}
	}
	return nil
}
