//go:build !linux

package spill

import "errors"

// ErrUnsupported is returned on systems other than Linux.
var ErrUnsupported = errors.New("spill: only supported on Linux")

// CheckDir returns ErrUnsupported.
func CheckDir(string) error { return ErrUnsupported }
