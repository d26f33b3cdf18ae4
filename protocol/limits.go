package protocol

import (
	"fmt"

	"github.com/shellsup/shellsup/decoder"
	"math"
	"strconv"
	"unicode/utf8"
)

// Limits of a run request, shared by the shellsup command line and the
// bindings, which check them before spawning anything.
const (
	DefaultTimeout = 120.0 // seconds
	MaxTimeout     = 600.0 // seconds
	DefaultGrace   = 2.0   // seconds, SIGTERM → SIGKILL at cleanup
	MaxGrace       = 60.0  // seconds
	// MaxCommandBytes is the longest command the kernel passes as one
	// argument: MAX_ARG_STRLEN is 131072 bytes including the NUL.
	MaxCommandBytes = 131071
)

// ValidationError is a request that was refused before anything was
// spawned. Its message quotes the bad value and says what is allowed.
type ValidationError struct {
	Msg string
}

func (e *ValidationError) Error() string { return e.Msg }

// Invalidf returns a *ValidationError with the formatted message.
func Invalidf(format string, a ...any) error {
	return &ValidationError{Msg: fmt.Sprintf(format, a...)}
}

// ValidateBudget checks a capture budget: from the marker's length plus
// one byte (decoder.MinBudget) to decoder.MaxBudget.
func ValidateBudget(budget int, shown string) error {
	if decoder.ValidateBudget(budget) != nil {
		return Invalidf("budget must be at least %d and at most %d bytes (got %s)", decoder.MinBudget, decoder.MaxBudget, shown)
	}
	return nil
}

// ValidateTimeout checks a timeout in seconds: finite, > 0 and <= 600.
// shown is the value as the user wrote it, quoted back in the error.
func ValidateTimeout(seconds float64, shown string) error {
	if math.IsNaN(seconds) || seconds <= 0 || seconds > MaxTimeout {
		return Invalidf("timeout must be greater than 0 and at most %g seconds (got %s)", MaxTimeout, shown)
	}
	return nil
}

// ValidateGrace checks a SIGTERM → SIGKILL grace in seconds: finite, >= 0
// and <= 60.
func ValidateGrace(seconds float64, shown string) error {
	if math.IsNaN(seconds) || seconds < 0 || seconds > MaxGrace {
		return Invalidf("grace must be at least 0 and at most %g seconds (got %s)", MaxGrace, shown)
	}
	return nil
}

// ValidateCommand checks the bash -c string: not empty, valid UTF-8 (it is
// echoed in frames, whose text is always UTF-8), and within the kernel's
// per-argument limit.
func ValidateCommand(command string) error {
	switch {
	case command == "":
		return Invalidf("command must be a non-empty string (got \"\")")
	case len(command) > MaxCommandBytes:
		return Invalidf("command is %d bytes; the kernel passes at most %d bytes (128 KiB, MAX_ARG_STRLEN, with the NUL) in one argument", len(command), MaxCommandBytes+1)
	case !utf8.ValidString(command):
		return Invalidf("command must be valid UTF-8 (got %s)", strconv.QuoteToASCII(clip(command)))
	}
	return nil
}

// clip shortens s for quoting in a message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
