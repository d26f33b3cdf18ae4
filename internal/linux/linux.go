//go:build linux

package linux

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// retryOnEINTR calls fn until it returns an error other than EINTR.
func retryOnEINTR(fn func() error) error {
	for {
		err := fn()
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// retryOnEINTR2 is retryOnEINTR for a call that also returns a value.
func retryOnEINTR2[T any](fn func() (T, error)) (T, error) {
	for {
		v, err := fn()
		if !errors.Is(err, unix.EINTR) {
			return v, err
		}
	}
}

// Pipe2 wraps pipe2(2).
func Pipe2(p []int, flags int) error {
	err := retryOnEINTR(func() error { return unix.Pipe2(p, flags) })
	return os.NewSyscallError("pipe2", err)
}

// Fstat wraps fstat(2); a FUSE file system may interrupt it.
func Fstat(fd int, st *unix.Stat_t) error {
	err := retryOnEINTR(func() error { return unix.Fstat(fd, st) })
	return os.NewSyscallError("fstat", err)
}

// SetPipeSize wraps fcntl(2) F_SETPIPE_SZ and returns the size the kernel
// chose.
func SetPipeSize(fd, size int) (int, error) {
	n, err := retryOnEINTR2(func() (int, error) { return unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, size) })
	return n, os.NewSyscallError("fcntl", err)
}

// Splice wraps splice(2) between two descriptors, without offsets. A
// signal that interrupts it before anything moved is retried; EAGAIN on a
// non-blocking splice is returned (errors.Is(err, unix.EAGAIN)).
func Splice(in, out, n, flags int) (int64, error) {
	moved, err := retryOnEINTR2(func() (int64, error) { return unix.Splice(in, nil, out, nil, n, flags) })
	return moved, os.NewSyscallError("splice", err)
}

// Getrlimit wraps getrlimit(2).
func Getrlimit(resource int, rl *unix.Rlimit) error {
	return os.NewSyscallError("getrlimit", unix.Getrlimit(resource, rl))
}

// SetNonblock wraps fcntl(2) F_SETFL with O_NONBLOCK set or cleared.
func SetNonblock(fd int, nonblocking bool) error {
	err := retryOnEINTR(func() error { return unix.SetNonblock(fd, nonblocking) })
	return os.NewSyscallError("fcntl", err)
}
