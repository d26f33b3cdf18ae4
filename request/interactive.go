package request

import (
	"math"
	"strconv"
	"strings"
)

// Limits of interactive runs (--pty, --idle-timeout).
const (
	// DefaultPTYCols and DefaultPTYRows are the terminal size of a --pty run
	// without --pty-size.
	DefaultPTYCols = 80
	DefaultPTYRows = 24
	// MaxPTYSide is the largest number of columns or rows (a winsize
	// field is 16 bits; nothing real is that large).
	MaxPTYSide = 10000
	// MaxIdleTimeout is the longest idle timeout, that of a job's lifetime.
	MaxIdleTimeout = MaxLifetime
)

// ParsePTYSize reads COLSxROWS, e.g. "120x40": two whole numbers from 1 to
// MaxPTYSide.
func ParsePTYSize(s string) (cols, rows int, err error) {
	c, r, ok := strings.Cut(strings.TrimSpace(s), "x")
	cols, errC := strconv.Atoi(c)
	rows, errR := strconv.Atoi(r)
	if !ok || errC != nil || errR != nil || cols < 1 || rows < 1 || cols > MaxPTYSide || rows > MaxPTYSide {
		return 0, 0, Invalidf("pty-size must be COLSxROWS, two whole numbers from 1 to %d, e.g. 120x40 (got %q)", MaxPTYSide, s)
	}
	return cols, rows, nil
}

// ParseIdleTimeout reads an idle timeout, a duration (ParseDuration:
// "2", "500ms", "1m"), then ValidateIdleTimeout.
func ParseIdleTimeout(s string) (float64, error) {
	v, ok := ParseDuration(s)
	if !ok {
		return 0, Invalidf("idle-timeout must be %s, greater than 0 and at most %g seconds (got %q)", DurationForm, MaxIdleTimeout, s)
	}
	return v, ValidateIdleTimeout(v, strings.TrimSpace(s))
}

// ValidateIdleTimeout checks an idle timeout in seconds: a number (not
// NaN), > 0 and <= MaxIdleTimeout.
func ValidateIdleTimeout(seconds float64, shown string) error {
	if math.IsNaN(seconds) || seconds <= 0 || seconds > MaxIdleTimeout {
		return Invalidf("idle-timeout must be greater than 0 and at most %g seconds (got %s)", MaxIdleTimeout, shown)
	}
	return nil
}

// StdinModes are the values --stdin takes.
const (
	StdinNull = "null" // /dev/null, the default
	StdinPipe = "pipe" // a pipe fed by input frames
)

// ValidateStdin checks a --stdin value.
func ValidateStdin(s string) error {
	if s != StdinNull && s != StdinPipe {
		return Invalidf("stdin must be %q or %q (got %q)", StdinNull, StdinPipe, s)
	}
	return nil
}
