package request

import "time"

// Bounds of a run's ending beyond the grace the caller chooses: after the
// deadline (or a cancel) and the grace, shellsup delivers its totals within
// CleanupBound. The bindings' watchdog margin (10 s) is set above it, so a
// watchdog fires only at a shellsup that stopped reporting, never at a
// slow but working cleanup; both bindings' tests check that.
const (
	// CleanupKill bounds the stop-and-kill loop after the grace.
	CleanupKill = 3 * time.Second
	// CleanupLanding is how long the last kills get to land and be reaped.
	CleanupLanding = 100 * time.Millisecond
	// CleanupDrain bounds the reading of pipes held open by something
	// outside the tree once the tree is gone.
	CleanupDrain = 500 * time.Millisecond
	// CleanupGoneFlush bounds the writing of totals to a parent that is
	// gone.
	CleanupGoneFlush = time.Second
)

// CleanupBound is the sum of the cleanup's bounds: the longest a cleanup
// takes past the grace.
const CleanupBound = CleanupKill + CleanupLanding + CleanupDrain + CleanupGoneFlush
