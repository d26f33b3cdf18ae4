//go:build !linux

package sandbox

// Probe finds nothing outside Linux: every mode is refused.
func Probe() Kernel {
	return Kernel{LandlockWhy: "a Linux feature", UserNSWhy: "a Linux feature"}
}
