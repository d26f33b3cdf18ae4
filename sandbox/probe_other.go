//go:build !linux

package sandbox

// Probe finds nothing outside Linux: every mode is refused.
func Probe() Kernel {
	return Kernel{LandlockWhy: "a Linux feature", UserNSWhy: "a Linux feature", SeccompWhy: "a Linux feature"}
}

// SweptTmp is one private TMPDIR a sweep removed.
type SweptTmp struct {
	Path    string
	Removed int
}

// SweepTmp removes nothing outside Linux, where no private TMPDIR is made.
func SweepTmp(stale func(tag string) bool) ([]SweptTmp, error) { return nil, nil }
