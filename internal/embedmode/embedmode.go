package embedmode

import "sync"

// Marker is the NAME=value entry the binding adds to the environment of a
// re-executed harness. The value is deliberately unlikely to be set by
// accident; embedded.Init removes the entry before the command is run, so
// the command never sees it.
const (
	MarkerName  = "SHELLSUP_EMBEDDED_SUPERVISOR"
	MarkerValue = "run-as-shellsup-v1"
	Marker      = MarkerName + "=" + MarkerValue
)

var registry struct {
	sync.Mutex
	set bool
	exe string
	err error
}

// Register records the executable to re-execute as the supervisor, or why
// it could not be found (err).
func Register(exe string, err error) {
	registry.Lock()
	defer registry.Unlock()
	registry.set, registry.exe, registry.err = true, exe, err
}

// Registered reports what Register recorded; ok is false if it was never
// called (the harness did not call embedded.Init).
func Registered() (exe string, ok bool, err error) {
	registry.Lock()
	defer registry.Unlock()
	return registry.exe, registry.set, registry.err
}

// Reset forgets the registration (for tests).
func Reset() {
	registry.Lock()
	defer registry.Unlock()
	registry.set, registry.exe, registry.err = false, "", nil
}
