package reaper

// Tier is one layer of containment around the command. Cleanup runs every
// tier's hooks before its own /proc walk, which is always the last resort
// and the only authority on whether the tree is gone.
//
// The subreaper tier is the floor and needs no hooks. A cgroup v2 tier
// would spawn bash into its own leaf (CLONE_INTO_CGROUP), implement Kill
// with cgroup.kill and Stop with cgroup.freeze, and cap forks with
// pids.max; a PID namespace tier would kill the namespace's init. Both slot
// in here without changing Cleanup or its callers.
type Tier interface {
	// Name is reported in the start frame's containment key.
	Name() string
	// Term asks every contained process to exit (SIGTERM+SIGCONT), if the
	// tier can do so as one operation.
	Term() error
	// Kill stops and kills every contained process, if the tier can do so
	// atomically.
	Kill() error
	// Close releases what the tier holds, once the tree is gone.
	Close() error
}

// killLister is a Tier whose Kill can say which processes it killed (host
// pids), so that the report counts each process once: the /proc walk after
// it may still find them, as zombies not yet reaped, and kill them again.
type killLister interface {
	KilledPIDs() []int
}

// subreaperTier is the floor: PR_SET_CHILD_SUBREAPER keeps every
// descendant inside shellsup's process tree, and the /proc walk does all
// the signalling, so its hooks do nothing.
type subreaperTier struct{}

func (subreaperTier) Name() string { return "subreaper" }
func (subreaperTier) Term() error  { return nil }
func (subreaperTier) Kill() error  { return nil }
func (subreaperTier) Close() error { return nil }
