package reaper

import (
	"os"

	"golang.org/x/sys/unix"
)

// readSmall reads a small file (a /proc stat line) into buf with one read.
func readSmall(path string, buf []byte) (int, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	for err == unix.EINTR {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return 0, os.NewSyscallError("open", err)
	}
	defer unix.Close(fd) // read-only: nothing to lose
	n, err := unix.Read(fd, buf)
	for err == unix.EINTR {
		n, err = unix.Read(fd, buf)
	}
	if err != nil {
		return 0, os.NewSyscallError("read", err)
	}
	return n, nil
}
