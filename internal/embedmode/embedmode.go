package embedmode

import (
	"os"
	"strings"
	"sync"
)

// Marker is the NAME=value entry the binding adds to the environment of a
// re-executed harness. The value is deliberately unlikely to be set by
// accident; embedded.Init removes the entry before the command is run, so
// the command never sees it.
const (
	MarkerName  = "SHELLSUP_EMBEDDED_SUPERVISOR"
	MarkerValue = "run-as-shellsup-v1"
	Marker      = MarkerName + "=" + MarkerValue
)

// Godebug is the runtime settings the shellsup binary sets with //go:debug
// directives (cmd/shellsup/godebug.go), which apply only to a main package
// built with them: a harness's own executable re-executed as the
// supervisor gets them through $GODEBUG instead, appended after the
// harness's own (the last setting of a name wins). A test keeps the two
// lists equal.
const Godebug = "containermaxprocs=0"

// SavedGodebugName carries the harness's own $GODEBUG, if it had one, to
// the re-executed supervisor, which restores it before the command runs:
// the command sees the harness's environment, not the supervisor's.
const SavedGodebugName = "SHELLSUP_EMBEDDED_GODEBUG"

// SupervisorEnv is env with the marker, the supervisor's $GODEBUG and the
// harness's saved $GODEBUG added (any earlier entries of those names are
// dropped). env must not be shared: it is modified in place.
func SupervisorEnv(env []string) []string {
	godebug, had := "", false
	out := env[:0]
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		switch name {
		case "GODEBUG":
			godebug, had = value, true
		case MarkerName, SavedGodebugName:
		default:
			out = append(out, kv)
		}
	}
	if had {
		out = append(out, SavedGodebugName+"="+godebug)
		godebug += ","
	}
	return append(out, "GODEBUG="+godebug+Godebug, Marker)
}

// RestoreEnv undoes SupervisorEnv in the supervisor's own environment:
// the marker goes, and $GODEBUG is the harness's again (or unset).
func RestoreEnv() {
	os.Unsetenv(MarkerName)
	if saved, ok := os.LookupEnv(SavedGodebugName); ok {
		os.Setenv("GODEBUG", saved)
	} else {
		os.Unsetenv("GODEBUG")
	}
	os.Unsetenv(SavedGodebugName)
}

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
