//go:build !linux

package ports

import "errors"

// ErrUnsupported is returned on systems other than Linux.
var ErrUnsupported = errors.New("ports: only supported on Linux")

// Listening returns ErrUnsupported.
func Listening(string, []Proc) ([]Port, error) { return nil, ErrUnsupported }
