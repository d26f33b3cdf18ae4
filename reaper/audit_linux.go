package reaper

// auditor is a Tier that can tell the members of the tree it no longer
// holds: a cgroup leaf a process was moved out of (a root command can write
// any cgroup.procs, the owner of a delegated subtree any of its own). The
// /proc walk still kills such a process, found by its parentage; the tier
// reports it among what the command tampered with.
type auditor interface {
	// Missing returns those of pids that are not in the tier's cgroups
	// now, from one read of each leaf's process list; nil when it cannot
	// tell.
	Missing(pids []int) []int
	// Where names the cgroup pid is in when that is outside the tier's
	// cgroups, "" when it is inside or cannot be read.
	Where(pid int) string
	// Left records that pid was found in cgroup where, outside the tier.
	Left(pid int, where string)
}

// auditors are the tiers of c that are auditors.
func auditors(c *Containment) []auditor {
	var out []auditor
	for _, t := range c.tiers {
		if a, ok := t.(auditor); ok {
			out = append(out, a)
		}
	}
	return out
}

// audit checks, once per target, that the live members just visited are
// still in every auditor's cgroups. It runs before they are signalled, so a
// member that then exits is checked too.
func (s *sweep) audit(ts []*target) {
	if len(s.auditors) == 0 {
		return
	}
	var fresh []int
	for _, t := range ts {
		if !t.audited {
			t.audited = true
			fresh = append(fresh, t.pid)
		}
	}
	if len(fresh) == 0 {
		return
	}
	for _, a := range s.auditors {
		for _, pid := range a.Missing(fresh) {
			if t := s.targets[pid]; t != nil {
				s.confirmLeft(a, t)
			}
		}
	}
}

// confirmLeft reports t as outside a's cgroups if, pinned, it is still the
// member the walk verified, alive, and in a cgroup outside a both before and
// after: a process exiting drops out of cgroup.procs before it is a zombie,
// and a pid may have been reused, neither of which is tampering.
func (s *sweep) confirmLeft(a auditor, t *target) {
	s.w.Pin(func() {
		p, err := s.dir.stat(t.pid)
		if err != nil || !alive(p.state) || !s.same(t, p) {
			return
		}
		where := a.Where(t.pid)
		if where == "" {
			return
		}
		q, err := s.dir.stat(t.pid)
		if err != nil || q.start != p.start || !alive(q.state) {
			return
		}
		a.Left(t.pid, where)
	})
}

// same: p, read pinned, is the process t stands for: its start time, or
// for a child not reaped since it was verified, any.
func (s *sweep) same(t *target, p proc) bool {
	if t.child && !s.w.reapedSince(t.pid, t.seq) {
		return true
	}
	return t.start != 0 && p.start == t.start
}

// alive: a state letter of a process that has not exited.
func alive(state byte) bool {
	switch state {
	case 'Z', 'X', 'x':
		return false
	}
	return true
}
