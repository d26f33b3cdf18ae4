package shellsup

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/shellsup/shellsup/protocol"
)

// Error categories. The first four are the categories of shellsup's error
// frame (README, "Frames mode"); the last three are the binding's own.
const (
	// CategoryValidation: the request was refused before anything was
	// spawned (a bad command, timeout, grace, budget, cwd or env).
	CategoryValidation = protocol.CategoryValidation
	// CategoryContainmentUnavailable: shellsup refused to run because it
	// could not guarantee cleanup (no child subreaper, no procfs), or the
	// platform is not Linux.
	CategoryContainmentUnavailable = protocol.CategoryContainmentUnavailable
	// CategoryExecFailed: bash, or shellsup itself, could not be executed
	// (permission denied, not an executable, argument list too long).
	CategoryExecFailed = protocol.CategoryExecFailed
	// CategoryInternal: a failure of the machinery that says nothing about
	// the request (fork or pipe creation failed for lack of resources, an
	// internal error in shellsup). The analogue of eino's "unknown".
	CategoryInternal = protocol.CategoryInternal
	// CategoryNotFound: no shellsup binary where Run looked
	// (Request.Binary, $SHELLSUP_BIN, $PATH).
	CategoryNotFound = "not_found"
	// CategoryProtocol: shellsup broke the frame protocol, or exited (or
	// was killed by Run's watchdog) without reporting totals.
	CategoryProtocol = "protocol"
	// CategoryCleanupIncomplete: the command ran and shellsup reported,
	// but its cleanup left processes running (Result.Cleanup.Stragglers;
	// the CLI exits 125). Run returns the full Result along with this
	// error, so a caller that looks only at the Result's exit code cannot
	// mistake the run for a clean success.
	CategoryCleanupIncomplete = "cleanup_incomplete"
)

// ErrUnsupported is wrapped by the error Run returns on platforms other
// than Linux, where shellsup, its subreaper and the parent-death signal do
// not exist. It matches errors.ErrUnsupported too.
var ErrUnsupported = fmt.Errorf("shellsup: supported on Linux only: %w", errors.ErrUnsupported)

// Error is an infrastructure failure: the run could not happen, or
// shellsup could not report how it ended. A non-zero exit, a timeout and a
// cancellation are not errors; they are reported in Result.
//
// Every error Run returns for such a failure is an *Error; match it with
// errors.As and switch on Category. Only with CategoryCleanupIncomplete is
// the Result returned alongside it filled in.
type Error struct {
	// Category is one of the Category constants. A newer shellsup may
	// report a category this version does not list; treat it like
	// CategoryInternal.
	Category string
	// Message is the complete description, quoting the bad value where
	// there is one, e.g. "timeout must be greater than 0 and at most 600
	// seconds (got 0s)". The text of Err, if any, is already in it.
	Message string
	// Err is the underlying cause, for errors.Is and errors.As: a
	// *request.ValidationError, a *protocol.FrameError, an
	// *exec.ExitError, exec.ErrNotFound, a syscall.Errno... It may be nil.
	Err error
}

// Error returns "shellsup: CATEGORY: MESSAGE".
func (e *Error) Error() string {
	return "shellsup: " + e.Category + ": " + e.Message
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// IsRetryable reports whether running the same request again may succeed,
// the way eino's shell tool reports it: true only for failures that say
// nothing about the request (eino: "timeout" and "unknown"; here
// CategoryInternal, the "unknown" analogue — a timeout is a Result, not an
// error). A missing binary, a validation failure, exec_failed and
// containment_unavailable recur on every retry. A protocol failure is not
// retryable either: the command may have run, in part, before shellsup
// broke off, and running it again could repeat its effects.
func (e *Error) IsRetryable() bool {
	return e != nil && e.Category == CategoryInternal
}

func newError(category, message string, cause error) *Error {
	return &Error{Category: category, Message: message, Err: cause}
}

// startError classifies a failure to start shellsup itself.
func startError(bin string, cfg config, err error) *Error {
	var errno syscall.Errno
	errors.As(err, &errno)
	switch errno {
	case syscall.ENOENT, syscall.ENOTDIR:
		return newError(CategoryNotFound, fmt.Sprintf("starting %s: %v", bin, err), err)
	case syscall.E2BIG:
		env := cfg.env
		if env == nil {
			env = os.Environ()
		}
		return newError(CategoryExecFailed, fmt.Sprintf("starting %s: %v: the command is %d bytes, the environment %d bytes in %d entries",
			bin, err, len(cfg.command), envBytes(env), len(env)), err)
	case syscall.EACCES, syscall.ENOEXEC, syscall.EISDIR, syscall.ELOOP, syscall.EPERM:
		return newError(CategoryExecFailed, fmt.Sprintf("starting %s: %v", bin, err), err)
	}
	// EAGAIN, ENOMEM, EMFILE, ETXTBSY (the binary is being written): the
	// machine, not the request.
	return newError(CategoryInternal, fmt.Sprintf("starting %s: %v", bin, err), err)
}

func envBytes(env []string) int {
	n := 0
	for _, kv := range env {
		n += len(kv) + 1
	}
	return n
}
