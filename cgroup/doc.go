// Package cgroup is shellsup's cgroup tier: a fresh leaf cgroup per run,
// which bash is cloned straight into (CLONE_INTO_CGROUP), so that the whole
// tree can be frozen and killed by the kernel in one operation and stays
// identifiable even if shellsup itself is SIGKILLed.
//
// The leaf is a cgroup v2 directory named
// shellsup-<pid>-<starttime>-<pidns inode>-<timens inode>-<boot id> (the
// pid and /proc start time of the shellsup that made it, and the PID
// namespace, time namespace and boot they mean something in: the kernel
// shifts a start time by the reader's boottime offset), created under
// shellsup's own cgroup or under a delegated parent given with --cgroup. A
// leaf of this PID namespace, time namespace and boot whose shellsup is
// dead is stale: Sweep, run at every start and by
// `shellsup sweep`, kills what is in it (cgroup.kill; in v1, SIGKILL
// through pidfds of verified members) and removes it. A leaf whose owner
// is alive, or cannot be judged (another namespace or boot, or a /proc that
// does not show this one), is never touched. Removal is bounded by a
// deadline however many cgroups the command made below its leaf.
//
// Limits: MaxProcs sets pids.max and MaxMemory memory.max (and
// memory.swap.max 0 where present) in the v2 leaf when the parent lets the
// controller through (cgroup.subtree_control); otherwise, on a hybrid host,
// in a v1 leaf of the same name under shellsup's own v1 cgroup of that
// controller. A process cannot be cloned into a v1 cgroup, so the thread
// that forks bash joins the v1 leaves for the fork and leaves them right
// after (PlaceThread): bash is born inside every leaf. Where neither
// version offers the controller, Open refuses with an *UnavailableError
// naming what is missing: a limit is never dropped silently.
//
// Leaf implements reaper.Tier: Kill freezes the leaf, writes cgroup.kill,
// and waits (bounded) for "populated 0" in cgroup.events; Close records
// what hit the limits (pids.events max, memory.events oom_kill) and removes
// the leaf. The limit files are watched (inotify) and read back at Close:
// Stats.Tampered names those a command of the same uid wrote. The package
// is Linux-only; elsewhere every entry point returns ErrUnsupported.
// docs/cleanup.md describes the tiers.
package cgroup
