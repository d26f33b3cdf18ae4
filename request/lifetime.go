package request

import (
	"math"
	"strconv"
	"strings"
)

// Limits of a job's lifetime (--lifetime), in seconds.
const (
	// DefaultLifetime is the lifetime the bindings give a job started with
	// neither a lifetime nor a timeout: 1 hour.
	DefaultLifetime = 3600.0 // seconds
	// MaxLifetime is the longest lifetime: 7 days. The minimum is
	// exclusive: a lifetime is greater than 0.
	MaxLifetime = 7 * 24 * 3600.0 // seconds
)

// ParseSeconds parses a number of seconds. inf, nan and numbers too large
// for a float64 (which ParseFloat rounds to ±Inf) parse here; the range
// check that follows refuses them.
func ParseSeconds(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v, err == nil || math.IsInf(v, 0)
}

// ParseLifetime reads a lifetime, a duration (ParseDuration: "90", "30s",
// "1h", "7d"), then ValidateLifetime.
func ParseLifetime(s string) (float64, error) {
	v, ok := ParseDuration(s)
	if !ok {
		return 0, Invalidf("lifetime must be a duration %s seconds (7 days), written as %s (got %q)", lifetimeRange, DurationForm, s)
	}
	return v, ValidateLifetime(v, strings.TrimSpace(s))
}

// ValidateLifetime checks a lifetime in seconds: a number (not NaN), > 0
// and <= MaxLifetime; ±Inf is out of range.
func ValidateLifetime(seconds float64, shown string) error {
	if math.IsNaN(seconds) || seconds <= 0 || seconds > MaxLifetime {
		return Invalidf("lifetime must be greater than 0 and at most %g seconds (7 days) (got %s)", MaxLifetime, shown)
	}
	return nil
}
