package cgroup

import "errors"

// ErrUnsupported is returned on systems without cgroups (anything but Linux).
var ErrUnsupported = errors.New("cgroup: cgroups are only supported on Linux")

// UnavailableError says why the cgroup tier or a limit cannot be had.
// shellsup refuses to run when a limit or --require cgroup needs it.
type UnavailableError struct {
	What string // what was being set up, e.g. "--max-procs 64"
	Err  error
}

func (e *UnavailableError) Error() string { return "cgroup: " + e.What + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *UnavailableError) Unwrap() error { return e.Err }
