package reaper

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/procstat"
)

// target is one verified descendant. A child of shellsup is signalled by
// pid, only while the Waiter is pinned and only if it was not reaped since
// it was verified (seq). Any other descendant is held as its firm identity,
// pid and start time (see firm), and signalled through a pidfd opened and
// checked against it just before the signal, then closed: the cleanup
// holds at most two fds at a time, however large the tree.
type target struct {
	pid, ppid               int
	start                   uint64 // 0 for a child whose stat was not read
	state                   byte   // from the last full scan
	child                   bool
	seq                     uint64 // child: the Waiter's reap count when verified
	termed, stopped, killed bool   // sent (or found dead when due)
	reached                 bool   // the last signal reached it alive
	counted                 bool   // in the report's Signalled
	forgotten               bool
	audited                 bool // checked against the auditors' cgroups
	signalErr               error
}

// sweep is the state of one cleanup.
type sweep struct {
	dir     procDir
	self    int
	w       *Waiter
	targets map[int]*target // by pid
	order   []*target       // discovery order: parents before children
	rep     Report
	phase   string // "term", "stop" or "kill": for tests (testHookVisit)
	// unsettled is set by a visit that saw a process it could not verify
	// (its parent changed, or its stat could not be read). Such a round is
	// not a fixpoint, whatever else it found.
	unsettled bool
	// starved is set by a visit that could open no fd (the command lowered
	// shellsup's RLIMIT_NOFILE): it worked from the held fds only.
	starved bool
	// tierKilled are the processes a tier's Kill killed, counted once in
	// the report by countTierKills; the walk's later signals to them are
	// not counted again.
	tierKilled map[int]bool
	// auditors are the tiers that check the members are still theirs.
	auditors []auditor
}

func newSweep(c *Containment, w *Waiter) *sweep {
	s := &sweep{dir: procDir{root: c.procRoot}, self: c.self, w: w, targets: map[int]*target{}, auditors: auditors(c)}
	s.rep.Tier = c.Name()
	w.Pin(w.track)
	return s
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

// signalAll sends each signal in turn to every target not yet done, a
// whole pass per signal (a SIGCONT right behind each SIGTERM would contend
// with a target already exiting on the other CPU). It returns how many
// targets it took in hand. The report counts a target only if the first
// signal reached it alive: one gone, or found a zombie, was not signalled.
func (s *sweep) signalAll(ts []*target, done func(*target) bool, sigs ...unix.Signal) (fresh int) {
	var todo []*target
	for _, t := range ts {
		if !done(t) {
			todo = append(todo, t)
		}
	}
	s.signalPass(todo, sigs[0], true)
	for _, t := range todo {
		s.mark(t, sigs[0])
	}
	for _, sig := range sigs[1:] {
		s.signalPass(todo, sig, false)
	}
	return len(todo)
}

// mark records that t was sent sig, and counts it if sig reached it.
func (s *sweep) mark(t *target, sig unix.Signal) {
	switch sig {
	case unix.SIGTERM:
		t.termed = true
	case unix.SIGSTOP:
		t.stopped = true
	case unix.SIGKILL:
		t.killed = true
	}
	if !t.reached || s.tierKilled[t.pid] {
		return
	}
	if sig == unix.SIGKILL {
		s.rep.Killed++
	}
	if !t.counted {
		t.counted = true
		s.rep.Signalled++
	}
}

// countTierKills counts, once each, the processes the tiers' Kill hooks
// killed: as killed, and as signalled unless the walk signalled them first.
// It runs before the walk's own SIGKILL pass.
func (s *sweep) countTierKills(c *Containment) {
	for _, tier := range c.tiers {
		kl, ok := tier.(killLister)
		if !ok {
			continue
		}
		for _, pid := range kl.KilledPIDs() {
			if s.tierKilled[pid] {
				continue
			}
			if s.tierKilled == nil {
				s.tierKilled = map[int]bool{}
			}
			s.tierKilled[pid] = true
			s.rep.Killed++
			if t := s.targets[pid]; t == nil || !t.counted {
				s.rep.Signalled++
			}
		}
	}
}

// pinBatch is how many children one pin signals back to back: the reap
// lock changes hands once per batch, not once per signal, and the Waiter
// waits at most that many kills to reap.
const pinBatch = 32

// signalPass sends sig to every target of ts not forgotten, in order:
// runs of children by pid, pinBatch to a pin; any other through a pidfd.
// first is false for a signal that follows another to the same targets.
func (s *sweep) signalPass(ts []*target, sig unix.Signal, first bool) {
	for _, t := range ts {
		t.reached = false // settle sets it for each target signalled
	}
	for i := 0; i < len(ts); {
		if !ts[i].child {
			if !ts[i].forgotten {
				s.settle(ts[i], s.signalDeep(ts[i], sig))
			}
			i++
			continue
		}
		j := i + 1
		for j < len(ts) && j-i < pinBatch && ts[j].child {
			j++
		}
		s.signalChildren(ts[i:j], sig, first)
		i = j
	}
}

// settle records the outcome of signalling t. A target found gone is
// forgotten: its pid may name a stranger now.
func (s *sweep) settle(t *target, err error) {
	t.reached = err == nil
	switch {
	case errors.Is(err, errExited):
	case errors.Is(err, errReused) || gone(err):
		s.forget(t)
	case err != nil:
		t.signalErr = err
	}
}

// signalChildren signals children by pid under one pin, each only if it is
// still the child verified (see signalChild).
func (s *sweep) signalChildren(ts []*target, sig unix.Signal, first bool) {
	s.w.Pin(func() {
		for _, t := range ts {
			if !t.forgotten {
				s.settle(t, s.signalChild(t, sig, first))
			}
		}
	})
}

// signalChild signals a child by pid, if it is still the child verified:
// not reaped since (its pid could name another child now) and unreaped.
// A child that has exited (a zombie: no signal can reach it) is left
// alone (errExited). Call it pinned. A signal that follows another (first
// false) skips the waitid: a child not reaped since it was verified still
// holds its pid (only the Waiter reaps, and SIGCHLD is never SIG_IGN), and
// a signal to a zombie does nothing; the count was settled by the first.
func (s *sweep) signalChild(t *target, sig unix.Signal, first bool) error {
	if s.w.reapedSince(t.pid, t.seq) {
		return errReused
	}
	if !first {
		return kill(t.pid, sig)
	}
	switch s.w.childState(t.pid) {
	case notChild:
		return errReused
	case exitedChild:
		return errExited
	}
	return kill(t.pid, sig)
}

// signalDeep signals a deeper descendant through a short-lived pidfd.
func (s *sweep) signalDeep(t *target, sig unix.Signal) error {
	if t.state == 'Z' && !procstat.OtherThreads(s.dir.root, t.pid) {
		return errExited // dead for good, awaiting its parent: not signalled, not counted
	}
	fd, err := openFirm(&s.dir, t)
	if err != nil {
		return err
	}
	defer unix.Close(fd) // a pidfd holds nothing to flush
	return pidfdSignal(fd, sig)
}

func (s *sweep) track(t *target) *target {
	s.targets[t.pid] = t
	s.order = append(s.order, t)
	return t
}

// forget drops a target whose process is gone; inOrder drops it from order.
func (s *sweep) forget(t *target) {
	t.forgotten = true
	if s.targets[t.pid] == t {
		delete(s.targets, t.pid)
	}
}

// stragglers describes what is left of the tree at the deadline.
func (s *sweep) stragglers() []Straggler {
	procs, err := s.dir.descendants(s.self)
	if err != nil {
		return s.undescribed(err)
	}
	out := make([]Straggler, 0, len(procs))
	for _, p := range procs {
		// comm is cut at 15 bytes by the kernel, maybe inside a character:
		// frames carry only valid UTF-8.
		st := Straggler{Pid: p.pid, Comm: strings.ToValidUTF8(p.comm, "\uFFFD"), State: string(p.state)}
		st.Reason = s.why(p)
		out = append(out, st)
	}
	if len(out) == 0 {
		// The tree emptied between the last wait and this scan; only
		// unreaped zombies of shellsup itself can be left, about to be reaped.
		return nil
	}
	return out
}

// undescribed is the report when /proc cannot be scanned: the scan's
// error, and, when no fd could be had, shellsup's children from the held
// children file, by pid.
func (s *sweep) undescribed(err error) []Straggler {
	out := []Straggler{{Reason: fmt.Sprintf("scanning /proc for stragglers: %v", err)}}
	if !starvedErr(err) {
		return out
	}
	kids, _ := readHeldChildren(heldChildren()) // opens nothing; an error leaves only the scan's
	for _, pid := range kids {
		out = append(out, Straggler{Pid: pid, Reason: "a child of shellsup, not described: no fd could be opened (RLIMIT_NOFILE lowered)"})
	}
	return out
}

// why says why a process is still there.
func (s *sweep) why(p proc) string {
	t := s.targets[p.pid]
	switch {
	case p.state == 'D' && t != nil && t.killed:
		return "uninterruptible sleep (D state); SIGKILL pending"
	case p.state == 'D':
		return "uninterruptible sleep (D state)"
	case t != nil && t.signalErr != nil:
		return "could not be signalled: " + t.signalErr.Error()
	case p.state == 'Z':
		return "zombie whose parent survives"
	case t != nil && t.killed:
		return "still alive after SIGKILL"
	default:
		return "appeared too late to be signalled before the deadline"
	}
}
