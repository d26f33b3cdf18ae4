//go:build linux && !amd64 && !arm64

package supervisor

// resetIgnoredSignals is a no-op where the kernel's struct sigaction layout
// is not spelled out here: an inherited SIG_IGN for signals 32 and 34, or
// for the job-control signals, then reaches bash.
func resetIgnoredSignals() {}

// ignoreReservedSignals is a no-op here for the same reason: signals 32 to
// 34 keep their default action, which ends shellsup.
func ignoreReservedSignals() {}

// quietChildExits is a no-op here: SIGCHLD keeps the Go runtime's handler,
// which runs once per child exit and does nothing.
func quietChildExits() {}
