//go:build !testseams

package supervisor

// Production builds have no test seams: /proc is always /proc and
// containment is always on.

func seamNoContainment() bool { return false }

func seamProc() string { return "/proc" }
