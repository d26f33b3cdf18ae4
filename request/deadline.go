package request

import (
	"strconv"
	"time"
)

// DeadlineKind says which rule a run's deadline follows: a call's timeout
// (--timeout, at most MaxTimeout) or a job's lifetime (--lifetime, at most
// MaxLifetime). A run has exactly one of the two.
type DeadlineKind string

const (
	KindTimeout  DeadlineKind = "timeout"
	KindLifetime DeadlineKind = "lifetime"
)

// Deadline is the one time limit of a run, from the bindings' argv to
// shellsup's Config: when it has passed and bash has not exited, the run
// is stopped and the cleanup begins.
type Deadline struct {
	Kind    DeadlineKind
	Seconds float64
}

// Flag is the one shellsup option that carries d, in the --name=value
// form.
func (d Deadline) Flag() string {
	return "--" + string(d.Kind) + "=" + strconv.FormatFloat(d.Seconds, 'f', -1, 64)
}

// Duration is d as a time.Duration.
func (d Deadline) Duration() time.Duration { return time.Duration(d.Seconds * float64(time.Second)) }

// Validate checks d's seconds by the rule of its kind; shown is the value
// as given, for the message.
func (d Deadline) Validate(shown string) error {
	if d.Kind == KindLifetime {
		return ValidateLifetime(d.Seconds, shown)
	}
	return ValidateTimeout(d.Seconds, shown)
}
