package shellsup

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/shellsup/shellsup/request"
	"github.com/shellsup/shellsup/spill"
)

// Limits of a job's lifetime and of its spill files.
const (
	// DefaultLifetime is the lifetime Start gives a job whose Request has
	// neither Lifetime nor Timeout.
	DefaultLifetime = time.Hour
	// MaxLifetime is the longest Request.Lifetime: 7 days, shellsup's
	// limit for --lifetime.
	MaxLifetime = 7 * 24 * time.Hour
	// DefaultSpillMax is the limit of each spill file when
	// Request.SpillMax is 0: 256 MiB.
	DefaultSpillMax = int64(spill.DefaultMax)
)

// validateLifetime checks Lifetime and, when it is set, makes it the
// run's timeout (the watchdog's measure). Timeout is the field as given,
// before its default.
func validateLifetime(timeout, lifetime time.Duration, c *config) error {
	if lifetime == 0 {
		return nil
	}
	if timeout != 0 {
		return &request.ValidationError{Msg: fmt.Sprintf("lifetime %v and timeout %v exclude each other: a job has a lifetime, a call a timeout", lifetime, timeout)}
	}
	if lifetime < 0 || lifetime > MaxLifetime {
		return &request.ValidationError{Msg: fmt.Sprintf("lifetime must be greater than 0 and at most %v (7 days) (got %v)", MaxLifetime, lifetime)}
	}
	c.lifetime, c.timeout = lifetime, lifetime
	return nil
}

// validateSpill checks the spill directory as shellsup would, so that
// nothing is spawned for a bad one, and the limit of its files.
func validateSpill(dir string, max int64, c *config) error {
	if max < 0 {
		return &request.ValidationError{Msg: fmt.Sprintf("spill max must be at least 0 bytes (0: the default, %d) (got %d)", DefaultSpillMax, max)}
	}
	if dir == "" {
		if max != 0 {
			return &request.ValidationError{Msg: fmt.Sprintf("spill max %d needs a spill directory", max)}
		}
		return nil
	}
	if strings.IndexByte(dir, 0) >= 0 {
		return &request.ValidationError{Msg: fmt.Sprintf("spill directory must not contain a NUL byte (got %s)", clip(dir))}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return &request.ValidationError{Msg: fmt.Sprintf("spill directory %q cannot be made absolute: %v", dir, err)}
	}
	// Elsewhere than Linux there are no spill files; Run and Start say so
	// (platformCheck) after validation.
	if err := spill.CheckDir(abs); err != nil && runtime.GOOS == "linux" {
		return &request.ValidationError{Msg: strings.Replace(err.Error(), strconv.Quote(abs), strconv.Quote(dir), 1)}
	}
	c.spill, c.spillMax = abs, max
	return nil
}
