//go:build !linux

package reaper

import "time"

// Containment is unavailable on this system; see ErrUnsupported.
type Containment struct{}

// Deadlines of a cleanup.
type Deadlines struct {
	Grace time.Duration
	Kill  time.Duration
	Hurry <-chan struct{}
}

// Waiter is unavailable on this system.
type Waiter struct{}

// Setup returns ErrUnsupported.
func Setup(procRoot string) (*Containment, error) { return nil, ErrUnsupported }

// Disabled returns an inert Containment.
func Disabled() *Containment { return &Containment{} }

// Name is "none".
func (c *Containment) Name() string { return "none" }

// AddTier does nothing.
func (c *Containment) AddTier(t Tier) {}

// Cleanup does nothing.
func (c *Containment) Cleanup(w *Waiter, d Deadlines) Report { return Report{Tier: "none"} }

// StartWaiter returns an inert Waiter.
func StartWaiter(leader int) *Waiter { return &Waiter{} }
