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
	// neither Lifetime nor Timeout: 1 h (request.DefaultLifetime).
	DefaultLifetime = time.Duration(request.DefaultLifetime * float64(time.Second))
	// MaxLifetime is the longest Request.Lifetime: 7 days, shellsup's
	// limit for --lifetime (request.MaxLifetime).
	MaxLifetime = time.Duration(request.MaxLifetime * float64(time.Second))
	// DefaultSpillMax is the limit of each spill file when
	// Request.SpillMax is 0: 256 MiB, shellsup's default for --spill-max
	// (request.DefaultSpillMax).
	DefaultSpillMax = int64(request.DefaultSpillMax)
)

// validateLifetime checks a Lifetime that is set and makes it the run's
// deadline (the watchdog's measure too). Timeout is the field as given,
// before its default.
func validateLifetime(timeout, lifetime time.Duration, c *config) error {
	if timeout != 0 {
		return &request.ValidationError{Msg: fmt.Sprintf("lifetime %v and timeout %v exclude each other: a job has a lifetime, a call a timeout", lifetime, timeout)}
	}
	c.deadline = request.Deadline{Kind: request.KindLifetime, Seconds: lifetime.Seconds()}
	return c.deadline.Validate(lifetime.String())
}

// validateSpill checks the spill directory as shellsup would, so that
// nothing is spawned for a bad one, and the limit of its files.
func validateSpill(dir string, max int64, c *config) error {
	if max < 0 {
		return &request.ValidationError{Msg: fmt.Sprintf("spill max must be at least 0 bytes (0: the default, %d) (got %d)", DefaultSpillMax, max)}
	}
	c.spillMax = max
	if dir == "" {
		return nil // Start makes one; Run refuses a SpillMax without it (needSpill)
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
	c.spill = abs
	return nil
}

// needSpill refuses, for Run, a spill limit without a spill directory.
func (c config) needSpill() error {
	if c.spill == "" && c.spillMax != 0 {
		return invalid(&request.ValidationError{Msg: fmt.Sprintf("spill max %d needs a spill directory (Request.Spill)", c.spillMax)})
	}
	return nil
}
