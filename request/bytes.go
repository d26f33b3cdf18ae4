package request

import (
	"fmt"
	"strconv"
	"strings"
)

// WorkloadOOMScore is the oom_score_adj the command starts with, in every
// tier (inherited by everything it starts): under memory pressure the
// kernel picks the command before shellsup, which must live to clean up and
// report.
const WorkloadOOMScore = 500

// Limits of the resource caps of the cgroup tier.
const (
	// MinMemory is the smallest --max-memory accepted: below it a login
	// shell cannot even start.
	MinMemory = 4 << 20
	// MinProcs is the smallest --max-procs: under a v1 pids limit the
	// thread that forks bash counts for the instant of the fork (and bash
	// alone can do nothing a limit is for).
	MinProcs = 2
	// MaxProcs is the largest --max-procs: the kernel's PID_MAX_LIMIT.
	MaxProcs = 4 << 20
	// MinProcsPidns is the smallest --max-procs with --pidns: the
	// namespace's init is the shellsup binary, whose Go runtime threads
	// count against pids.max (10 was the measured least that starts bash).
	MinProcsPidns = 16
)

// ValidateMaxProcs checks a process cap; shown is the value as given.
func ValidateMaxProcs(n int64, shown string) error {
	if n < MinProcs || n > MaxProcs {
		return Invalidf("max-procs must be a whole number of processes, at least %d and at most %d (got %s)", MinProcs, MaxProcs, shown)
	}
	return nil
}

// ValidateMaxMemory checks a memory cap in bytes; shown is the value as given.
func ValidateMaxMemory(n int64, shown string) error {
	if n < MinMemory {
		return Invalidf("max-memory must be at least %d bytes (4M): a login shell needs that much to start (got %s)", MinMemory, shown)
	}
	return nil
}

// Limits of the spill files (--spill-max) and of every byte count.
const (
	// DefaultSpillMax is the limit of one spill file when --spill-max is
	// not given: 256 MiB.
	DefaultSpillMax = 256 << 20
	// MinSpillMax is the smallest --spill-max: 0 keeps no byte (every one
	// is counted and dropped).
	MinSpillMax = 0
	// MaxByteCount is the largest byte count ParseBytes reads: 2^62 (4 EiB),
	// far above any file or memory, and leaving int64 room for the sums
	// made with it.
	MaxByteCount = 1 << 62
)

// ByteCountForm says, for messages, how a byte count is written.
const ByteCountForm = "a whole number of bytes, optionally with a K, M, G or T suffix (powers of 1024; a trailing B or iB is allowed), e.g. 64M"

// ParseBytes reads a byte count: a whole number from 0 to MaxByteCount,
// optionally followed by K, M, G or T (powers of 1024, upper or lower case,
// an optional trailing B or iB), e.g. "512K", "64M", "1G", "1048576". It is
// the one parser of byte counts; each option applies its own minimum.
func ParseBytes(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "IB"), "B")
	mult := int64(1)
	if n := len(t); n > 0 {
		if shift, ok := map[byte]uint{'K': 10, 'M': 20, 'G': 30, 'T': 40}[t[n-1]]; ok {
			mult, t = 1<<shift, t[:n-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 0 || v > MaxByteCount/mult {
		return 0, fmt.Errorf("%q is not a byte count: use %s, at most 2^62", s, ByteCountForm)
	}
	return v * mult, nil
}

// ParseSpillMax reads --spill-max: a byte count (ParseBytes), at least
// MinSpillMax.
func ParseSpillMax(s string) (int64, error) {
	v, err := ParseBytes(s)
	if err != nil || v < MinSpillMax {
		return 0, Invalidf("--spill-max must be %s, at least %d and at most 2^62 (got %q)", ByteCountForm, MinSpillMax, s)
	}
	return v, nil
}
