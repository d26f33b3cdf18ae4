//go:build !linux

package credential

import (
	"errors"
	"syscall"
)

// ErrUnsupported: running the command as another user needs Linux.
var ErrUnsupported = errors.New("--user needs Linux")

// Credential is nil outside Linux.
func (u *User) Credential() *syscall.Credential { return nil }

// Permitted always refuses outside Linux.
func (u *User) Permitted() error { return ErrUnsupported }

// Drop always refuses outside Linux.
func Drop(u *User) error { return ErrUnsupported }
