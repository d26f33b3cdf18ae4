package reaper

import "time"

// Straggler is a process Cleanup could not remove before its deadline.
type Straggler struct {
	Pid    int
	Comm   string
	State  string // the /proc state letter
	Reason string
}

// Report says what Cleanup did.
type Report struct {
	Tier       string
	Signalled  int // distinct processes a SIGTERM or SIGKILL reached alive (a tier's kill included)
	Killed     int // distinct processes a SIGKILL (the walk's or a tier's) reached alive
	Rounds     int // /proc scans
	Stragglers []Straggler
	Duration   time.Duration
}

// Clean reports whether nothing survived.
func (r Report) Clean() bool { return len(r.Stragglers) == 0 }
