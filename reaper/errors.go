package reaper

import "errors"

// ErrUnsupported is returned on systems without the kernel features the
// package needs (anything but Linux).
var ErrUnsupported = errors.New("reaper: process containment is only supported on Linux")

// UnavailableError says why containment cannot be set up. shellsup refuses
// to run the command when it sees one.
type UnavailableError struct {
	What string // what was being set up, e.g. "set child subreaper"
	Err  error
}

func (e *UnavailableError) Error() string { return "reaper: " + e.What + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *UnavailableError) Unwrap() error { return e.Err }
