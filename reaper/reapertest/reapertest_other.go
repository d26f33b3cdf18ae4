//go:build !linux

package reapertest

import (
	"errors"
	"testing"
)

// TokenVar is the environment variable that carries the token.
const TokenVar = "SHELLSUP_LEAK_TOKEN"

// Token marks the processes of one test.
type Token string

// NewToken returns a fixed token: there is nothing to scan on this system.
func NewToken() Token { return "unsupported" }

// Env is the NAME=value entry to add to a process's environment.
func (t Token) Env() string { return TokenVar + "=" + string(t) }

// Proc is a leaked process.
type Proc struct {
	Pid, PPid           int
	State, Cmdline, Why string
}

// BecomeSubreaper is unsupported here.
func BecomeSubreaper() error { return errors.New("reapertest: only supported on Linux") }

// Find finds nothing: process scanning needs Linux.
func Find(tok Token, owned ...int) []Proc { return nil }

// Check fails: the leak check needs Linux.
func Check(t testing.TB, tok Token, owned ...int) {
	t.Skip("reapertest: the leak check needs Linux /proc")
}

// Kill does nothing.
func Kill(tok Token, owned ...int) {}

// ReapOrphans does nothing.
func ReapOrphans() {}
