package request

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
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

// The allowed ranges, in the words of every message that refuses a value.
var (
	timeoutRange  = fmt.Sprintf("greater than 0 and at most %g", MaxTimeout)
	graceRange    = fmt.Sprintf("at least %g and at most %g", MinGrace, MaxGrace)
	budgetRange   = fmt.Sprintf("at least %d and at most %d", MinBudget, MaxBudget)
	lifetimeRange = fmt.Sprintf("greater than 0 and at most %g", MaxLifetime)
)

// ValidateTimeout checks a timeout in seconds: a number (not NaN), > 0 and
// <= MaxTimeout; ±Inf is out of range. shown is the value as the user wrote
// it, quoted back in the error.
func ValidateTimeout(seconds float64, shown string) error {
	if math.IsNaN(seconds) || seconds <= 0 {
		return Invalidf("timeout must be %s seconds (got %s)", timeoutRange, shown)
	}
	if seconds > MaxTimeout {
		return Invalidf("timeout must be %s seconds (got %s); %s", timeoutRange, shown, LongerThanTimeout)
	}
	return nil
}

// LongerThanTimeout is what a timeout over MaxTimeout points to: a job,
// whose lifetime may be up to MaxLifetime.
var LongerThanTimeout = fmt.Sprintf("a longer run is a job: give it a lifetime instead (--lifetime, lifetime=, Lifetime) of up to %g seconds (7 days)", MaxLifetime)

// ValidateGrace checks a SIGTERM → SIGKILL grace in seconds: a number (not
// NaN), >= MinGrace and <= MaxGrace; ±Inf is out of range.
func ValidateGrace(seconds float64, shown string) error {
	if math.IsNaN(seconds) || seconds < MinGrace || seconds > MaxGrace {
		return Invalidf("grace must be %s seconds (got %s)", graceRange, shown)
	}
	return nil
}

// ValidateBudget checks a capture budget: from MinBudget to MaxBudget (see
// BudgetFits).
func ValidateBudget(budget int, shown string) error {
	if !BudgetFits(budget) {
		return Invalidf("budget must be %s bytes (got %s)", budgetRange, shown)
	}
	return nil
}

// TimeoutNotADuration is the error for a timeout text that is not a
// duration (ParseDuration).
func TimeoutNotADuration(shown string) error {
	return Invalidf("timeout must be a duration %s seconds, written as %s (got %q)", timeoutRange, DurationForm, shown)
}

// GraceNotADuration is the error for a grace text that is not a duration.
func GraceNotADuration(shown string) error {
	return Invalidf("grace must be a duration %s seconds, written as %s (got %q)", graceRange, DurationForm, shown)
}

// BudgetNotAByteCount is the error for a budget text that is not a byte
// count (ParseBytes).
func BudgetNotAByteCount(shown string) error {
	return Invalidf("budget must be %s, %s bytes (got %q)", ByteCountForm, budgetRange, shown)
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
