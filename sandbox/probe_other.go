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

// FileID is a file as the kernel knows it.
type FileID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

// Pin pins nothing outside Linux, where every mode is refused.
func (p *Policy) Pin() error { return nil }

func (p *Policy) grantedNow() []string { return nil }
