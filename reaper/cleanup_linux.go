package reaper

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Deadlines of a cleanup. Cleanup never runs longer than Grace + Kill
// (plus one /proc scan).
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
	s := &sweep{dir: procDir{root: c.procRoot}, self: c.self, w: w, targets: map[int]*target{}}
	s.rep.Tier = c.Name()
	if !c.disabled && !s.empty() {
		graceEnd := start.Add(d.Grace)
		hardEnd := graceEnd.Add(d.Kill)
		c.hooks(Tier.Term)
		s.term(graceEnd)
		if !s.waitGrace(graceEnd, d.Hurry) {
			c.hooks(Tier.Kill)
			s.kill(hardEnd)
		}
		// A moment for the last kill to land and be reaped.
		if !s.waitEmpty(time.Now().Add(100 * time.Millisecond)) {
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

// target is one descendant. A child of shellsup is signalled by pid, and
// only while the Waiter is pinned: an unreaped child's pid cannot be
// reused. Any other descendant is signalled through a pidfd verified
// against the scan; while that pidfd shows the process alive, later scans
// trust it without reading /proc again.
type target struct {
	proc
	child                   bool
	fd                      int // -1 for a child
	termed, stopped, killed bool
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
	// unsettled is set by a visit that saw a process it could not verify
	// (its parent changed between the scan and the pidfd: it was being
	// reparented). Such a round is not a fixpoint, whatever else it found.
	unsettled bool
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
	termed := func(t *target) bool { return t.termed }
	s.signalAll(s.visit(false), termed, unix.SIGTERM, unix.SIGCONT)
	// A tree that was all children and honours SIGTERM is gone within
	// moments; only otherwise is a full scan worth its cost.
	if s.waitEmpty(minTime(graceEnd, time.Now().Add(quickExit))) {
		return
	}
	for round := 0; round < maxTermRounds && !s.empty(); round++ {
		if s.signalAll(s.visit(true), termed, unix.SIGTERM, unix.SIGCONT) == 0 && !s.unsettled {
			return
		}
	}
}

// kill is steps 3–5.
func (s *sweep) kill(hardEnd time.Time) {
	stoppedOrKilled := func(t *target) bool { return t.stopped || t.killed }
	killed := func(t *target) bool { return t.killed }
	for !s.empty() && time.Now().Before(hardEnd) {
		for !s.empty() && time.Now().Before(hardEnd) {
			if s.signalAll(s.visit(true), stoppedOrKilled, unix.SIGSTOP) == 0 && !s.unsettled {
				break
			}
		}
		s.signalAll(s.visit(false), killed, unix.SIGKILL)
		s.waitEmpty(minTime(hardEnd, time.Now().Add(10*time.Millisecond)))
	}
}

// signalAll sends each signal in turn to every target not yet done, a
// whole pass per signal (a SIGCONT right behind each SIGTERM would contend
// with a target already exiting on the other CPU). It returns how many
// targets were signalled.
func (s *sweep) signalAll(ts []*target, done func(*target) bool, sigs ...unix.Signal) (fresh int) {
	var todo []*target
	for _, t := range ts {
		if !done(t) {
			todo = append(todo, t)
		}
	}
	if len(todo) == 0 {
		return 0
	}
	for _, sig := range sigs {
		for _, t := range todo {
			s.signal(t, sig)
		}
	}
	for _, t := range todo {
		switch sigs[0] {
		case unix.SIGTERM:
			t.termed = true
		case unix.SIGSTOP:
			t.stopped = true
		case unix.SIGKILL:
			t.killed = true
			s.rep.Killed++
		}
		if !t.counted() {
			s.rep.Signalled++
		}
	}
	return len(todo)
}

// counted reports whether the target was already counted as signalled,
// before the flag for the current signal is set.
func (t *target) counted() bool {
	n := 0
	for _, f := range []bool{t.termed, t.stopped, t.killed} {
		if f {
			n++
		}
	}
	return n > 1
}

// visit lists the live tree, parents before children. The fast form takes
// shellsup's children from its children files plus the deeper descendants
// already held by pidfd; the full form also reads /proc/PID/stat of every
// other process, which finds what the children files missed and every new
// deeper descendant. Both run pinned, so a child listed is still a child
// when signalAll checks it again.
func (s *sweep) visit(full bool) []*target {
	s.rep.Rounds++
	s.unsettled = false
	var live []*target
	s.w.Pin(func() {
		kids, err := s.dir.children(s.self)
		if err != nil && !full {
			return // the full scan that follows finds them
		}
		isChild := make(map[int]bool, len(kids))
		for _, pid := range kids {
			isChild[pid] = true
		}
		// The children files can miss a child (proc(5): while siblings
		// exit; or always, without CONFIG_PROC_CHILDREN). A child already
		// tracked is asked directly.
		for pid, t := range s.targets {
			if t.child && !isChild[pid] && s.w.isChild(pid) {
				isChild[pid] = true
				kids = append(kids, pid)
			}
		}
		var pids []int
		if full {
			if pids, err = s.dir.pids(); err != nil {
				return // /proc was readable at setup; a transient EMFILE is retried next round
			}
		} else {
			for pid, t := range s.targets {
				if !t.child {
					pids = append(pids, pid)
				}
			}
		}
		members := map[int]bool{}
		byParent := map[int][]proc{}
		for _, pid := range pids {
			if isChild[pid] {
				continue
			}
			if t := s.targets[pid]; t != nil && !t.child {
				if t.fd >= 0 && pidfdSignal(t.fd, 0) == nil {
					members[pid] = true
					continue
				}
				s.forget(t) // exited; the pid may be someone else's now
			}
			if !full {
				continue
			}
			p, err := s.dir.stat(pid)
			if err != nil {
				if !gone(err) {
					s.unsettled = true // unreadable (EMFILE?): this round cannot be a fixpoint
				}
				continue
			}
			if p.ppid == s.self {
				isChild[pid] = true // reparented to shellsup after the children files were read
				kids = append(kids, pid)
				continue
			}
			byParent[p.ppid] = append(byParent[p.ppid], p)
		}
		for _, pid := range kids {
			if t := s.targets[pid]; t == nil || !t.child && t.fd < 0 {
				if t != nil {
					s.forget(t) // a dead entry under a pid that names a child again
				}
				s.track(&target{proc: proc{pid: pid, ppid: s.self}, child: true, fd: -1})
			}
			members[pid] = true
		}
		queue := append([]int(nil), kids...)
		for pid := range members {
			if !isChild[pid] {
				queue = append(queue, pid)
			}
		}
		for len(queue) > 0 {
			m := queue[0]
			queue = queue[1:]
			for _, p := range byParent[m] {
				// State Z is kept: a multi-threaded process whose leader
				// thread exited shows Z while its other threads run, and
				// signals to it reach them. A true zombie just ignores them.
				if p.state == 'X' || members[p.pid] {
					continue
				}
				if s.open(p) != nil {
					members[p.pid] = true
					queue = append(queue, p.pid)
				}
			}
		}
		for _, t := range s.order {
			if members[t.pid] {
				live = append(live, t)
			}
		}
	})
	return live
}

// open tracks a deeper descendant found by a full scan behind a verified
// pidfd, or returns nil if it is gone or its pid now names another process.
func (s *sweep) open(p proc) *target {
	fd, err := openVerified(&s.dir, p)
	t := &target{proc: p, fd: fd}
	if err != nil {
		if errors.Is(err, errReused) {
			s.unsettled = true // a reparented process, or a reused pid: look again
			return nil
		}
		if gone(err) {
			return nil
		}
		t.fd, t.signalErr = -1, err // reported if it is still there at the end
	}
	if old := s.targets[p.pid]; old != nil {
		s.forget(old)
	}
	return s.track(t)
}

func (s *sweep) track(t *target) *target {
	s.targets[t.pid] = t
	s.order = append(s.order, t)
	return t
}

// signal sends sig to t: through the pidfd, or for a child by pid, with
// the Waiter pinned and the pid checked to still be a child (a child the
// Waiter reaped since visit listed it is dropped for good: its pid may
// name a stranger now). Pinning one signal at a time lets the Waiter reap
// between signals, while the tree is dying.
func (s *sweep) signal(t *target, sig unix.Signal) {
	var err error
	switch {
	case t.child:
		s.w.Pin(func() {
			if !s.w.isChild(t.pid) {
				t.child = false // t.fd is -1: never signalled again
				return
			}
			err = kill(t.pid, sig)
		})
	case t.fd >= 0:
		err = pidfdSignal(t.fd, sig)
	default:
		return
	}
	if err != nil && !errors.Is(err, unix.ESRCH) {
		t.signalErr = err
	}
}

// forget drops a target whose process is gone.
func (s *sweep) forget(t *target) {
	if t.fd >= 0 {
		unix.Close(t.fd) // a pidfd holds nothing to flush
	}
	delete(s.targets, t.pid)
	s.order = slices.DeleteFunc(s.order, func(o *target) bool { return o == t })
}

func (s *sweep) closeAll() {
	for _, t := range slices.Clone(s.order) {
		s.forget(t)
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
		// comm is cut at 15 bytes by the kernel, maybe inside a character:
		// frames carry only valid UTF-8.
		st := Straggler{Pid: p.pid, Comm: strings.ToValidUTF8(p.comm, "\uFFFD"), State: string(p.state)}
		t := s.targets[p.pid]
		switch {
		case p.state == 'D' && t != nil && t.killed:
			st.Reason = "uninterruptible sleep (D state); SIGKILL pending"
		case p.state == 'D':
			st.Reason = "uninterruptible sleep (D state)"
		case t != nil && t.signalErr != nil:
			st.Reason = "could not be signalled: " + t.signalErr.Error()
		case p.state == 'Z':
			st.Reason = "zombie whose parent survives"
		case t != nil && t.killed:
			st.Reason = "still alive after SIGKILL"
		default:
			st.Reason = "appeared too late to be signalled before the deadline"
		}
		out = append(out, st)
	}
	if len(out) == 0 {
		// The tree emptied between the last wait and this scan; only
		// unreaped zombies of shellsup itself can be left, about to be reaped.
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
