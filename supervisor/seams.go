//go:build !testseams

package supervisor

import "time"

// Production builds have no test seams: /proc is always /proc,
// containment is always on, the start frame follows the spawn at once and
// the terminal's bounds are the documented ones.

func seamNoContainment() bool { return false }

func seamProc() string { return "/proc" }

func seamStartDelay() time.Duration { return 0 }

func seamStallWait(d time.Duration) time.Duration { return d }

func seamSummaryWait(d time.Duration) time.Duration { return d }

func seamTidyHold(d time.Duration) time.Duration { return d }
