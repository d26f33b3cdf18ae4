package linux

import (
	"errors"

	"golang.org/x/sys/unix"
)

// This file builds on every system (the Go binding opens its spill files
// on macOS too); the rest of the package is Linux-only.

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

// Openat is openat(2) with O_CLOEXEC added. It returns the bare errno, for
// the caller's *os.PathError.
func Openat(dirfd int, path string, flags int, mode uint32) (int, error) {
	var fd int
	err := retryOnEINTR(func() (err error) { fd, err = unix.Openat(dirfd, path, flags|unix.O_CLOEXEC, mode); return err })
	return fd, err
}
