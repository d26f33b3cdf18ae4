//go:build !linux

package spill

// MakeDir returns ErrUnsupported.
func MakeDir(string) error { return ErrUnsupported }
