package linux

import (
	"os"

	"golang.org/x/sys/unix"
)

// Getdents wraps getdents64(2): the next entries of the directory open on
// fd, as many as fit in buf; 0 at the end.
func Getdents(fd int, buf []byte) (int, error) {
	n, err := retryOnEINTR2(func() (int, error) { return unix.Getdents(fd, buf) })
	return n, os.NewSyscallError("getdents64", err)
}
