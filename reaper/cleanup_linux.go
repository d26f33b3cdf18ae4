package reaper

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// Deadlines of a cleanup. Cleanup never runs longer than Grace + Kill
// (plus one /proc scan).
type Deadlines struct {
	Grace time.Duration // SIGTERM → SIGKILL: how long the tree may take to exit on its own
	Kill  time.Duration // after the grace: how long the stop-and-kill loop may try
}

// maxTermRounds bounds the scans of the SIGTERM pass. Each round signals
// the processes the previous one missed because they were forked meanwhile.
const maxTermRounds = 16

// Cleanup removes every descendant of shellsup and returns when wait
// reports ECHILD (the tree is gone, zombies included) or the deadline
// passes, whichever is first. The steps, the same for every way a run ends:
//
//  1. SIGTERM then SIGCONT (so stopped processes act on it) to every
//     descendant, parents before children, rescanning until a scan finds
//     no process it has not signalled.
//  2. Wait up to the grace for the tree to empty, returning as soon as it is.
//  3. Stop the tree: SIGSTOP every descendant and rescan until a scan
//     finds no process not yet stopped (a stopped process cannot fork).
//  4. SIGKILL every stopped process, back to back.
//  5. Let the Waiter reap; repeat 3–4 until ECHILD or the deadline.
//
// Whatever remains at the deadline is reported as a straggler.
func (c *Containment) Cleanup(w *Waiter, d Deadlines) Report {
	start := time.Now()
	s := &sweep{dir: procDir{root: c.procRoot}, self: c.self, w: w, targets: map[key]*target{}}
	s.rep.Tier = c.Name()
	if !c.disabled && !s.empty() {
		graceEnd := start.Add(d.Grace)
		hardEnd := graceEnd.Add(d.Kill)
		c.hooks(Tier.Term)
		s.term()
		if !s.waitEmpty(graceEnd) {
			c.hooks(Tier.Kill)
			s.kill(hardEnd)
		}
		// One more reap tick: the last kill may have landed just now.
		if !s.waitEmpty(time.Now().Add(2 * tick)) {
			s.rep.Stragglers = s.stragglers()
		}
	}
	s.closeAll()
	for _, t := range c.tiers {
		if err := t.Close(); err != nil {
			s.rep.Stragglers = append(s.rep.Stragglers, Straggler{Reason: fmt.Sprintf("closing tier %s: %v", t.Name(), err)})
		}
	}
	s.rep.Duration = time.Since(start)
	return s.rep
}

// hooks runs one hook of every tier. A failing hook is not fatal: the /proc
// walk after it does the same work the slow way.
func (c *Containment) hooks(hook func(Tier) error) {
	for _, t := range c.tiers {
		_ = hook(t) // the /proc walk that follows covers a failed hook
	}
}

type key struct {
	pid   int
	start uint64
}

// target is one descendant, identified by pid and start time, with the
// pidfd every signal to it goes through.
type target struct {
	proc
	fd                      int
	termed, stopped, killed bool
	signalErr               error
}

// sweep is the state of one cleanup.
type sweep struct {
	dir     procDir
	self    int
	w       *Waiter
	targets map[key]*target
	rep     Report
}

func (s *sweep) empty() bool {
	select {
	case <-s.w.Empty():
		return true
	default:
		return false
	}
}

// waitEmpty waits until the tree is empty or until the deadline, and
// reports whether it is empty.
func (s *sweep) waitEmpty(deadline time.Time) bool {
	d := time.Until(deadline)
	if d <= 0 {
		return s.empty()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.w.Empty():
		return true
	case <-t.C:
		return s.empty()
	}
}

// term is step 1: SIGTERM+SIGCONT to every descendant until a rescan finds
// nobody new.
func (s *sweep) term() {
	for round := 0; round < maxTermRounds && !s.empty(); round++ {
		fresh := 0
		for _, t := range s.scan() {
			if t.termed {
				continue
			}
			t.termed = true
			fresh++
			s.signal(t, unix.SIGTERM)
			s.signal(t, unix.SIGCONT)
		}
		if fresh == 0 {
			return
		}
	}
}

// kill is steps 3–5.
func (s *sweep) kill(hardEnd time.Time) {
	for !s.empty() && time.Now().Before(hardEnd) {
		for !s.empty() && time.Now().Before(hardEnd) {
			fresh := 0
			for _, t := range s.scan() {
				if t.stopped || t.killed {
					continue
				}
				t.stopped = true
				fresh++
				s.signal(t, unix.SIGSTOP)
			}
			if fresh == 0 {
				break
			}
		}
		for _, t := range s.targets {
			if !t.killed && t.fd >= 0 && !t.dead() {
				t.killed = true
				s.rep.Killed++
				s.signal(t, unix.SIGKILL)
			}
		}
		s.waitEmpty(minTime(hardEnd, time.Now().Add(10*time.Millisecond)))
	}
}

// scan lists the live descendants (zombies need no signal: they go when
// their parent is killed or reaps them), tracking new ones with a verified
// pidfd, in breadth-first order. Targets no longer present are forgotten.
func (s *sweep) scan() []*target {
	s.rep.Rounds++
	procs, err := s.dir.descendants(s.self)
	if err != nil {
		// /proc was readable at setup; a transient failure (EMFILE) is
		// retried by the caller's next round.
		return nil
	}
	live := make([]*target, 0, len(procs))
	seen := make(map[key]bool, len(procs))
	for _, p := range procs {
		k := key{p.pid, p.start}
		seen[k] = true
		t := s.targets[k]
		if p.dead() {
			if t != nil {
				t.state = p.state
			}
			continue
		}
		if t == nil {
			t = &target{proc: p, fd: -1}
			fd, err := openVerified(&s.dir, p)
			if err != nil {
				if gone(err) || errors.Is(err, errReused) {
					continue // exited since the scan; nothing to signal
				}
				t.signalErr = err
			}
			t.fd = fd
			s.targets[k] = t
		}
		t.state = p.state
		live = append(live, t)
	}
	for k, t := range s.targets {
		if !seen[k] {
			s.forget(k, t)
		}
	}
	return live
}

// signal sends sig through t's pidfd.
func (s *sweep) signal(t *target, sig unix.Signal) {
	if t.fd < 0 {
		return
	}
	err := pidfdSignal(t.fd, sig)
	if err != nil && !errors.Is(err, unix.ESRCH) {
		t.signalErr = err
	}
}

func (s *sweep) forget(k key, t *target) {
	if t.fd >= 0 {
		unix.Close(t.fd) // a pidfd holds nothing to flush
	}
	s.count(t)
	delete(s.targets, k)
}

func (s *sweep) closeAll() {
	for k, t := range s.targets {
		s.forget(k, t)
	}
}

// count adds a target to the report's signalled total as it is forgotten.
func (s *sweep) count(t *target) {
	if t.termed || t.killed {
		s.rep.Signalled++
	}
}

// stragglers describes what is left of the tree at the deadline.
func (s *sweep) stragglers() []Straggler {
	procs, err := s.dir.descendants(s.self)
	if err != nil {
		return []Straggler{{Reason: fmt.Sprintf("scanning /proc for stragglers: %v", err)}}
	}
	out := make([]Straggler, 0, len(procs))
	for _, p := range procs {
		st := Straggler{Pid: p.pid, Comm: p.comm, State: string(p.state), Reason: "still alive after SIGKILL"}
		if t := s.targets[key{p.pid, p.start}]; t != nil && t.signalErr != nil {
			st.Reason = "could not be signalled: " + t.signalErr.Error()
		}
		switch p.state {
		case 'D':
			st.Reason = "uninterruptible sleep (D state); SIGKILL pending"
		case 'Z':
			st.Reason = "zombie whose parent survives"
		}
		out = append(out, st)
	}
	if len(out) == 0 {
		// The tree emptied between the last wait and this scan; only
		// unreaped zombies of shellsup itself can be left, reaped next tick.
		return nil
	}
	return out
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
