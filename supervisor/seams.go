//go:build !testseams

package supervisor

import "time"

// Production builds have no test seams: /proc is always /proc,
// containment is always on and the start frame follows the spawn at once.

func seamNoContainment() bool { return false }

func seamProc() string { return "/proc" }

func seamStartDelay() time.Duration { return 0 }
