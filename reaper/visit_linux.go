package reaper

// testHookVisit, set only by tests, runs before each visit with the phase
// ("term", "stop" or "kill") and the round number: the PID-reuse tests
// free and reuse pids at exact points of a cleanup.
var testHookVisit func(phase string, round int)

// round is what one visit learns: the verified members of the tree, the
// members whose children are still to be looked at, and, from a full scan,
// the processes not yet verified, by parent pid.
type round struct {
	members  map[int]*target
	queue    []*target
	byParent map[int][]proc
}

func (r *round) add(t *target) {
	if r.members[t.pid] == nil {
		r.members[t.pid] = t
		r.queue = append(r.queue, t)
	}
}

// visit lists the live tree, parents before children, pinned (a child
// listed is still a child when signalled). The plan of one round:
//
//  1. children: shellsup's children, from its children files and by asking
//     every tracked child directly;
//  2. candidates: the fast form recalls the deeper descendants already
//     verified (signal checks each again); the full form reads every other
//     /proc/PID/stat and sorts it into known members and unverified
//     processes by parent;
//  3. closure: from the members, parents first, admit each unverified
//     process whose parent is a member, verified by identity;
//  4. order: the members in discovery order.
func (s *sweep) visit(full bool) []*target {
	s.rep.Rounds++
	if testHookVisit != nil {
		testHookVisit(s.phase, s.rep.Rounds)
	}
	s.unsettled, s.starved = false, false
	r := &round{members: map[int]*target{}, byParent: map[int][]proc{}}
	s.w.Pin(func() {
		s.children(r)
		if full {
			s.scan(r)
		} else {
			s.recall(r)
		}
		s.closure(r)
	})
	refill()
	live := s.inOrder(r)
	s.audit(live)
	return live
}

// children is step 1. A children file can miss a child (proc(5): while
// siblings exit; or always, without CONFIG_PROC_CHILDREN): a child already
// tracked is asked directly, and a full scan finds the rest by parent pid.
func (s *sweep) children(r *round) {
	kids, err := s.dir.children(s.self)
	if err != nil {
		s.unreadable(err)
		kids, _ = readHeldChildren(heldChildren()) // opens nothing; an error leaves kids empty
	}
	for _, pid := range kids {
		s.addChild(r, pid, 0)
	}
	if l := s.w.leader; r.members[l] == nil && s.w.isChild(l) {
		s.addChild(r, l, 0) // bash, if a thread other than the main one forked it
	}
	for pid, t := range s.targets {
		if t.child && r.members[pid] == nil && s.w.isChild(pid) {
			s.addChild(r, pid, 0)
		}
	}
}

// addChild adds pid, an unreaped child of shellsup (the caller checked,
// pinned), keeping what was known of it only if it is the same process:
// the same child not reaped since, or a verified descendant reparented to
// shellsup with the same start time. start is 0 when not read.
func (s *sweep) addChild(r *round, pid int, start uint64) {
	t := s.targets[pid]
	switch {
	case t != nil && t.child && !s.w.reapedSince(pid, t.seq):
	case t != nil && !t.child && s.sameStart(pid, t.start, start):
		t.child, t.seq = true, s.w.seq()
	default:
		if t != nil {
			s.forget(t)
		}
		t = s.track(&target{pid: pid, ppid: s.self, start: start, child: true, seq: s.w.seq()})
	}
	r.add(t)
}

// sameStart reports whether pid's start time is want, reading it if
// the caller did not (start 0).
func (s *sweep) sameStart(pid int, want, start uint64) bool {
	if start == 0 {
		p, err := s.dir.stat(pid)
		if err != nil {
			return false
		}
		start = p.start
	}
	return start == want
}

// recall is step 2, fast form: every deeper descendant still tracked.
func (s *sweep) recall(r *round) {
	for _, t := range s.order {
		if !t.forgotten && !t.child {
			r.add(t)
		}
	}
}

// scan is step 2, full form.
func (s *sweep) scan(r *round) {
	pids, err := s.dir.pids()
	if err != nil {
		s.unreadable(err) // /proc was readable at setup; a transient EMFILE is retried next round
		return
	}
	for _, pid := range pids {
		p, err := s.dir.stat(pid)
		if err != nil {
			if !gone(err) {
				s.unreadable(err) // this round cannot be a fixpoint
			}
			continue
		}
		s.classify(r, p)
	}
}

// classify sorts one process of a full scan: a member already (a child,
// or a descendant with the same firm identity), a child the children files
// missed, or a process to verify through its parent.
func (s *sweep) classify(r *round, p proc) {
	t := s.targets[p.pid]
	switch {
	case r.members[p.pid] != nil:
		t = r.members[p.pid]
		if t.start == 0 {
			t.start = p.start
		}
		t.state = p.state
	case p.ppid == s.self:
		if s.w.isChild(p.pid) { // reparented to shellsup after the children files were read
			s.addChild(r, p.pid, p.start)
			r.members[p.pid].state = p.state
		}
	case t != nil && !t.child && t.start == p.start:
		t.state = p.state
		r.add(t)
	default:
		if t != nil {
			s.forget(t) // gone: the pid names another process now
		}
		r.byParent[p.ppid] = append(r.byParent[p.ppid], p)
	}
}

// closure is step 3: breadth first from the members.
func (s *sweep) closure(r *round) {
	for len(r.queue) > 0 {
		m := r.queue[0]
		r.queue = r.queue[1:]
		for _, p := range r.byParent[m.pid] {
			// State Z is kept: a multi-threaded process whose leader
			// thread exited shows Z while its other threads run, and
			// signals to it reach them. A true zombie just ignores them.
			if p.state == 'X' || r.members[p.pid] != nil {
				continue
			}
			if t := s.admit(p, m); t != nil {
				r.add(t)
			}
		}
	}
}

// admit verifies p, a process whose parent pid is member m's, as m's child,
// and tracks it under a firm identity. The chain holds link by link: p's
// pidfd is opened, p's stat read again (same start time, parent m's pid or
// shellsup), and then m is checked to still hold its pid (a child of
// shellsup cannot lose it while pinned; a deeper member still shows its own
// start time). So at the moment p's parent was read, that pid named m, and
// not a stranger that took a dead member's pid. Anything else leaves the
// round unsettled: the next round looks again.
func (s *sweep) admit(p proc, m *target) *target {
	fd, err := openVerified(&s.dir, p)
	if err != nil {
		if !gone(err) {
			s.unreadable(err)
		}
		return nil
	}
	defer closeFd(fd)
	if !s.holds(m) || !firm(fd, p.start) {
		s.unsettled = true
		return nil
	}
	return s.track(&target{pid: p.pid, ppid: p.ppid, start: p.start, state: p.state})
}

// unreadable records that this round could not read something: it is not
// a fixpoint, and if no fd could be had, it is starved.
func (s *sweep) unreadable(err error) {
	s.unsettled = true
	if starvedErr(err) {
		s.starved = true
	}
}

// holds reports whether member m still holds its pid.
func (s *sweep) holds(m *target) bool {
	if m.child {
		return true // verified this round, and nothing is reaped while pinned
	}
	return s.sameStart(m.pid, m.start, 0)
}

// inOrder is step 4; it also drops forgotten targets from the order.
func (s *sweep) inOrder(r *round) []*target {
	live := make([]*target, 0, len(r.members))
	kept := s.order[:0]
	for _, t := range s.order {
		if t.forgotten {
			continue
		}
		kept = append(kept, t)
		if r.members[t.pid] == t {
			live = append(live, t)
		}
	}
	clear(s.order[len(kept):])
	s.order = kept
	return live
}
