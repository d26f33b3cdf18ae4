//go:build !linux

package cgroup

// Host is unavailable on this system.
type Host struct{}

// Options of a leaf.
type Options struct {
	Parent     string
	MaxProcs   int64
	MaxMemory  int64
	DeferSweep bool
}

// Stats are what hit the limits.
type Stats struct {
	PidsLimitHit, OOMKills int64
	Tampered               []string
	Left                   string
}

// Leaf is unavailable on this system.
type Leaf struct{}

// Swept is one stale leaf removed by Sweep.
type Swept struct {
	Path   string
	Killed int
	Left   string
}

// Discover returns ErrUnsupported.
func Discover() (Host, error) { return Host{}, ErrUnsupported }

// Open returns ErrUnsupported.
func Open(h Host, o Options) (*Leaf, error) { return nil, ErrUnsupported }

// Sweep returns ErrUnsupported.
func Sweep(h Host, parent string) ([]Swept, error) { return nil, ErrUnsupported }

// Tag returns ErrUnsupported.
func Tag(proc string) (string, error) { return "", ErrUnsupported }

// StaleTags returns ErrUnsupported.
func StaleTags(proc string) (func(tag string) bool, error) { return nil, ErrUnsupported }
