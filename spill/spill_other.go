//go:build !linux

package spill

import "errors"

// ErrUnsupported is returned on systems other than Linux.
var ErrUnsupported = errors.New("spill: only supported on Linux")

// DefaultMax is the default limit of one spill file.
const DefaultMax = 256 << 20

// CheckDir returns ErrUnsupported.
func CheckDir(string) error { return ErrUnsupported }
