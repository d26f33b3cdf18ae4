package reaper

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/request"
)

// Deadlines of a cleanup. Cleanup ends by Grace + Kill (plus the stop and
// kill pass running when Kill ran out, and 100 ms for the last kills to land).
type Deadlines struct {
	Grace time.Duration // SIGTERM → SIGKILL: how long the tree may take to exit on its own
	Kill  time.Duration // after the grace: how long the stop-and-kill loop may try
	// Hurry, when closed, ends the grace at once (a second Ctrl-C); nil
	// never does.
	Hurry <-chan struct{}
}

// quickExit is how long the SIGTERM pass waits for shellsup's children to
// exit before it scans /proc for descendants the children files missed.
const quickExit = 20 * time.Millisecond

// quickExitMax bounds how long the SIGTERM pass keeps waiting, quickExit
// at a time, for a tree still emptying (a wide one takes a while to exit
// and be reaped) before its first full scan.
const quickExitMax = 200 * time.Millisecond

// maxTermRounds bounds the scans of the SIGTERM pass (the grace bounds its
// time). Each round signals the processes the previous one missed because
// they were forked meanwhile.
const maxTermRounds = 16

// landing is how long the last kills get to land and be reaped (one of the
// cleanup's bounds, stated in package request).
const landing = request.CleanupLanding

// Cleanup removes every descendant of shellsup and returns when wait
// reports ECHILD (the tree is gone, zombies included) or the deadline
// passes, whichever is first. The steps, the same for every way a run ends:
//
//  1. SIGTERM then SIGCONT (so stopped processes act on it) to every
//     descendant, parents before children, rescanning until a scan finds
//     no process it has not signalled, or the grace is over.
//  2. Wait up to the grace for the tree to empty, returning as soon as it is.
//  3. Stop the tree: SIGSTOP every descendant and rescan until a scan
//     finds no process not yet stopped (a stopped process cannot fork);
//     one found running again (someone sent it SIGCONT) is killed at once.
//  4. SIGKILL every process found, back to back, to the end of the list.
//  5. Let the Waiter reap; repeat 3–4 until ECHILD or the deadline.
//  6. Whatever remains 100 ms later is reported as a straggler.
//
// A process is a descendant only if its parent is one: every signal goes to
// a process whose chain up to shellsup was verified (see docs/cleanup.md).
func (c *Containment) Cleanup(w *Waiter, d Deadlines) Report {
	start := time.Now()
	restoreNofile(c.nofile)
	s := newSweep(c, w)
	if !c.disabled && !s.empty() {
		graceEnd := start.Add(d.Grace)
		s.run(c, graceEnd, graceEnd.Add(d.Kill), d.Hurry)
	}
	s.closeTiers(c)
	s.rep.Duration = time.Since(start)
	return s.rep
}

// run is steps 1–6 for a tree that is not empty.
func (s *sweep) run(c *Containment, graceEnd, hardEnd time.Time, hurry <-chan struct{}) {
	c.hooks(Tier.Term)
	s.term(graceEnd)
	if s.waitGrace(graceEnd, hurry) {
		return
	}
	c.hooks(Tier.Kill)
	s.countTierKills(c)
	s.kill(hardEnd)
	if !s.waitEmpty(time.Now().Add(landing)) {
		s.rep.Stragglers = s.stragglers()
	}
}

// hooks runs one hook of every tier. A failing hook is not fatal: the /proc
// walk after it does the same work the slow way.
func (c *Containment) hooks(hook func(Tier) error) {
	for _, t := range c.tiers {
		_ = hook(t) // the /proc walk that follows covers a failed hook
	}
}

// closeTiers closes every tier; a failure is reported as a straggler.
func (s *sweep) closeTiers(c *Containment) {
	for _, t := range c.tiers {
		if err := t.Close(); err != nil {
			s.rep.Stragglers = append(s.rep.Stragglers, Straggler{Reason: fmt.Sprintf("closing tier %s: %v", t.Name(), err)})
		}
	}
}

func termed(t *target) bool          { return t.termed }
func stoppedOrKilled(t *target) bool { return t.stopped || t.killed }
func killed(t *target) bool          { return t.killed }

// waitGrace is waitEmpty that also returns when hurry is closed.
func (s *sweep) waitGrace(deadline time.Time, hurry <-chan struct{}) bool {
	t := time.NewTimer(max(time.Until(deadline), 0))
	defer t.Stop()
	select {
	case <-s.w.Empty():
		return true
	case <-hurry:
		return s.empty()
	case <-t.C:
		return s.empty()
	}
}

// term is step 1. The first pass takes shellsup's own children from its
// children files, one read for all (after bash exits, that is usually the
// whole tree); then full scans until one finds nobody new.
func (s *sweep) term(graceEnd time.Time) {
	s.phase = "term"
	s.signalAll(s.visit(false), termed, unix.SIGTERM, unix.SIGCONT)
	// A tree that was all children and honours SIGTERM is gone within
	// moments; only otherwise is a full scan worth its cost.
	if s.waitExits(graceEnd) {
		return
	}
	for round := 0; round < maxTermRounds && !s.empty() && time.Now().Before(graceEnd); round++ {
		if s.signalAll(s.visit(true), termed, unix.SIGTERM, unix.SIGCONT) == 0 && !s.unsettled {
			return
		}
	}
}

// waitExits waits for the tree to empty, in slices of quickExit while each
// slice reaps someone, up to quickExitMax or the grace; it reports whether
// the tree is empty. A full scan pins the Waiter while it reads every
// process's stat, so it is deferred while the tree is visibly exiting.
func (s *sweep) waitExits(graceEnd time.Time) bool {
	end := minTime(graceEnd, time.Now().Add(quickExitMax))
	for {
		reaped := s.w.Count()
		if s.waitEmpty(minTime(end, time.Now().Add(quickExit))) {
			return true
		}
		if s.w.Count() == reaped || !time.Now().Before(end) {
			return false
		}
	}
}

// kill is steps 3–5. The deadline ends the loop, never a pass once begun:
// each turn stops the tree (at least one scan) and kills all it found.
func (s *sweep) kill(hardEnd time.Time) {
	for {
		s.stopTree(hardEnd)
		s.phase = "kill"
		s.signalAll(s.visit(false), killed, unix.SIGKILL)
		if s.waitEmpty(minTime(hardEnd, time.Now().Add(10*time.Millisecond))) || !time.Now().Before(hardEnd) {
			return
		}
	}
}

// stopTree is step 3: stop rounds until one finds nobody new (or the
// deadline), always at least one.
func (s *sweep) stopTree(hardEnd time.Time) {
	// A starved round (no fd to be had) is never settled: the kill pass
	// that follows is what makes progress then.
	for s.stopRound() > 0 || s.unsettled && !s.starved {
		if s.empty() || !time.Now().Before(hardEnd) {
			return
		}
	}
}

// stopRound scans the tree, stops whoever is not stopped yet, and kills
// whoever was stopped and runs again. It returns how many it signalled.
func (s *sweep) stopRound() int {
	s.phase = "stop"
	ts := s.visit(true)
	again := resumed(ts)
	return s.signalAll(ts, stoppedOrKilled, unix.SIGSTOP) + s.signalAll(again, killed, unix.SIGKILL)
}

// resumed picks the targets sent SIGSTOP that the scan saw running.
func resumed(ts []*target) []*target {
	var out []*target
	for _, t := range ts {
		if t.stopped && !t.killed && running(t.state) {
			out = append(out, t)
		}
	}
	return out
}

// running reports whether a /proc state letter is that of a process that
// is not stopped, traced-stopped or dead (0: not read this round).
func running(state byte) bool {
	switch state {
	case 0, 'T', 't', 'Z', 'X', 'x':
		return false
	}
	return true
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
