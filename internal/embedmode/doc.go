// Package embedmode is the hand-off between the Go binding
// (bindings/go) and its embedded mode (bindings/go/embedded), which must
// not be imported by the binding itself: the binding does not link the
// supervisor unless the harness asks for it.
//
// bindings/go/embedded registers the harness's own executable here; the
// binding then runs that executable as the supervisor, with Marker in its
// environment, and the re-executed harness's call to embedded.Init sees the
// marker and becomes the supervisor.
package embedmode
