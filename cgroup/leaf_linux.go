package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/linux"
	"github.com/shellsup/shellsup/internal/procstat"
)

// Options of a leaf.
type Options struct {
	Parent    string // a delegated cgroup v2 directory; "" means shellsup's own cgroup
	Require   bool   // the v2 leaf is required (--require cgroup)
	MaxProcs  int64  // pids.max; 0 means no limit
	MaxMemory int64  // memory.max in bytes; 0 means no limit
	// DeferSweep leaves the start-up sweep of stale leaves to the caller's
	// call of SweepStale (shellsup runs it beside bash's start).
	DeferSweep bool
}

// Stats are what hit the limits during the run.
type Stats struct {
	PidsLimitHit int64 // forks refused at pids.max (pids.events "max")
	OOMKills     int64 // processes killed at memory.max (memory.events "oom_kill")
	// Tampered names the limit files ("pids.max", "memory.max", …) written
	// or changed after shellsup set them: by the command, which owns them
	// as much as shellsup does when both run as one uid.
	Tampered []string
	// Left is a leaf Close left in place for the next sweep: a process
	// still pinned it, or the cgroups the command made below it were not
	// all removed by the deadline. "" when every leaf was removed.
	Left string
}

// Tier names, as reported in the start frame's containment.
const (
	TierName   = "cgroup"    // a v2 leaf: freeze, kill and populated
	TierV1Name = "cgroup-v1" // v1 leaves only: limits, the /proc walk kills
)

// Bounds of the kernel's own work, which the /proc walk backs up.
const (
	populatedWait = time.Second     // cgroup.kill → populated 0
	rmdirWait     = 2 * time.Second // EBUSY while the last tasks are released
)

// Leaf is one run's cgroups. It implements reaper.Tier.
type Leaf struct {
	name     string
	dir      string   // the v2 leaf, "" when only v1 leaves exist
	dirFD    int      // open on dir, for CLONE_INTO_CGROUP; -1 without one (held.fd)
	held     held     // the v2 leaf's directory (locked) and process list
	kill     *os.File // cgroup.kill, cgroup.freeze, cgroup.events: opened at
	freeze   *os.File // setup, because the command may lower shellsup's
	events   *os.File // RLIMIT_NOFILE before the cleanup needs them
	v1       []v1Leaf
	pidsEv   *eventsFile
	memEv    *eventsFile
	guard    *guard    // the limit files, watched for writes
	watched  []string  // the leaves whose process lists guard watches
	pidsPeak *peakFile // nil without a pids limit or pids.peak
	stats    Stats
	killed   []int    // processes in the leaf when cgroup.kill was written
	selfV2   string   // shellsup's own v2 cgroup (absolute), for the audit
	selfCg   []byte   // /proc/self/cgroup when the leaf was made, for the audit
	left     leftList // members found outside the leaves (audit_linux.go)
	closed   bool
	closeEr  error
	sweep    func() // the deferred start-up sweep; nil when done or not deferred
}

// peakFile is pids.peak, read at Close: above the pids.max shellsup set,
// only processes moved into the leaf from outside can have put it.
type peakFile struct {
	f   *os.File
	max int64
}

// watchMoves watches the process lists of a limited leaf (once per leaf)
// for a write after setup: a process moved in from outside, where the
// limit did not hold; and the leaf's directory for a cgroup made below it,
// whose process list a process can be moved into past that watch (a nested
// shellsup's leaf is one too: shellsup cannot tell it from a hiding place).
func (l *Leaf) watchMoves(dir, controller string, v2 bool) {
	if slices.Contains(l.watched, dir) {
		return
	}
	l.watched = append(l.watched, dir)
	files, where := []string{"cgroup.procs"}, "the leaf"
	if !v2 {
		files, where = []string{"cgroup.procs", "tasks"}, "the v1 "+controller+" leaf"
	}
	for _, f := range files {
		l.guard.watchEvents(filepath.Join(dir, f), f+" of "+where+" written after setup: a process was moved in from outside its limits", unix.IN_MODIFY)
	}
	l.guard.watchEvents(dir, "a cgroup made below "+where+" after setup: a process moved into it passes the leaf's own process list", unix.IN_CREATE|unix.IN_ONLYDIR)
	l.guard.watchEvents(dir, where+" renamed after setup", unix.IN_MOVE_SELF)
}

// v1Leaf is a leaf in one v1 hierarchy and the cgroup the forking thread
// returns to.
type v1Leaf struct {
	dir, home, controller string
	held                  held
}

// eventsFile is a flat-keyed file ("max 3") read once at Close.
type eventsFile struct {
	f   *os.File
	key string
}

// Open sweeps stale leaves, creates this shellsup's leaf and applies the
// limits. It returns an *UnavailableError when the v2 leaf cannot be made
// (the caller may fall back to the subreaper tier unless a limit, Require or
// Parent was asked for) or when a limit cannot be applied and read back.
// On error nothing is left behind.
func Open(h Host, o Options) (*Leaf, error) {
	me, err := self(h.Proc)
	if err != nil {
		return nil, &UnavailableError{What: "naming the leaf", Err: err}
	}
	parent := o.Parent
	if parent == "" {
		parent = h.Self
	}
	startSweep := func() {
		// best effort: a stale leaf left is retried next start
		_, _ = sweep(h, parent, me, procShowsSelf(h.Proc, me.pid), time.Now().Add(startSweepWait))
	}
	l := &Leaf{name: me.name(), dirFD: -1, guard: newGuard()}
	l.selfCg, _ = os.ReadFile(filepath.Join(h.Proc, "self", "cgroup")) // nil: Where reads it at the audit
	if o.DeferSweep {
		l.sweep = startSweep
	} else {
		startSweep()
	}
	v2err := l.makeV2(h, parent)
	if v2err != nil && (o.Require || o.Parent != "" || (o.MaxProcs == 0 && o.MaxMemory == 0)) {
		l.guard.close()
		return nil, &UnavailableError{What: "creating a cgroup v2 leaf", Err: v2err}
	}
	if err := l.limit(h, parent, "pids", o.MaxProcs, fmt.Sprintf("--max-procs %d", o.MaxProcs), v2err); err != nil {
		_ = l.Close()
		return nil, err
	}
	if err := l.limit(h, parent, "memory", o.MaxMemory, fmt.Sprintf("--max-memory %d", o.MaxMemory), v2err); err != nil {
		_ = l.Close()
		return nil, err
	}
	return l, nil
}

// startTime is field 22 of /proc/PID/stat, in clock ticks since boot.
func startTime(proc string, pid int) (uint64, error) {
	st, err := procstat.Read(proc, pid)
	return st.Start, err
}

// makeV2 creates the v2 leaf and opens its control files.
func (l *Leaf) makeV2(h Host, parent string) error {
	if h.Unified == "" {
		return errors.New("no cgroup2 filesystem is mounted")
	}
	if parent == "" {
		return errors.New("shellsup's own cgroup v2 is unknown (no 0:: line in /proc/self/cgroup)")
	}
	dir := filepath.Join(parent, l.name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("in %s: %w", parent, err)
	}
	l.dir, l.selfV2 = dir, h.Self
	var err error
	if l.kill, err = os.OpenFile(filepath.Join(dir, "cgroup.kill"), os.O_WRONLY, 0); err != nil {
		return l.undoV2(fmt.Errorf("cgroup.kill (Linux 5.14+) is needed: %w", err))
	}
	if l.freeze, err = os.OpenFile(filepath.Join(dir, "cgroup.freeze"), os.O_WRONLY, 0); err != nil {
		return l.undoV2(fmt.Errorf("cgroup.freeze is needed: %w", err))
	}
	if l.events, err = os.Open(filepath.Join(dir, "cgroup.events")); err != nil {
		return l.undoV2(err)
	}
	if l.held, err = hold(dir); err != nil {
		return l.undoV2(err)
	}
	l.dirFD = l.held.fd
	return nil
}

// undoV2 removes a half-made v2 leaf and returns err.
func (l *Leaf) undoV2(err error) error {
	l.closeV2Files()
	_ = unix.Rmdir(l.dir)
	l.dir = ""
	return err
}

func (l *Leaf) closeV2Files() {
	for _, f := range []*os.File{l.kill, l.freeze, l.events} {
		if f != nil {
			f.Close() // read-only or single-write control files: nothing to flush
		}
	}
	l.kill, l.freeze, l.events = nil, nil, nil
	l.held.close()
	l.dirFD = -1
}

// limit applies one limit (value 0: none) in the v2 leaf when its parent
// lets the controller through, else in a v1 leaf of that controller.
func (l *Leaf) limit(h Host, parent, controller string, value int64, what string, v2err error) error {
	if value == 0 {
		return nil
	}
	var why []string
	if v2err != nil {
		why = append(why, "no cgroup v2 leaf ("+v2err.Error()+")")
	} else if err := enableController(parent, controller); err != nil {
		why = append(why, err.Error())
	} else {
		return l.applyLimit(l.dir, controller, value, what, true)
	}
	home, ok := h.V1[controller]
	if !ok {
		why = append(why, "no cgroup v1 "+controller+" hierarchy is mounted")
		return &UnavailableError{What: what, Err: errors.New("the " + controller + " controller is not available: " + strings.Join(why, "; "))}
	}
	dir := filepath.Join(home, l.name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		why = append(why, fmt.Sprintf("cannot create a cgroup v1 %s leaf in %s: %v", controller, home, err))
		return &UnavailableError{What: what, Err: errors.New("the " + controller + " controller is not available: " + strings.Join(why, "; "))}
	}
	hd, err := hold(dir)
	if err != nil {
		_ = unix.Rmdir(dir)
		return &UnavailableError{What: what, Err: err}
	}
	l.v1 = append(l.v1, v1Leaf{dir: dir, home: home, controller: controller, held: hd})
	return l.applyLimit(dir, controller, value, what, false)
}

// enableController makes sure the leaves under parent get controller:
// already in cgroup.subtree_control, or available in cgroup.controllers
// and enabled now. Enabling fails (EBUSY) in a non-root cgroup that has
// processes of its own (the v2 "no internal processes" rule): run shellsup
// in a delegated cgroup and pass its parent with --cgroup.
func enableController(parent, controller string) error {
	if hasWord(filepath.Join(parent, "cgroup.subtree_control"), controller) {
		return nil
	}
	if !hasWord(filepath.Join(parent, "cgroup.controllers"), controller) {
		return fmt.Errorf("the cgroup v2 %s controller is not available in %s (not in cgroup.controllers)", controller, parent)
	}
	if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+"+controller), 0); err != nil {
		return fmt.Errorf("cannot enable the cgroup v2 %s controller in %s/cgroup.subtree_control (a cgroup with processes of its own cannot hand controllers to its children; start shellsup in a delegated cgroup and name its parent with --cgroup): %w", controller, parent, err)
	}
	return nil
}

func hasWord(path, word string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, w := range strings.Fields(string(b)) {
		if w == word {
			return true
		}
	}
	return false
}

// applyLimit writes a limit into dir and reads it back.
func (l *Leaf) applyLimit(dir, controller string, value int64, what string, v2 bool) error {
	files, evFile, evKey := limitFiles(controller, v2)
	for i, f := range files {
		v := value
		if i > 0 && v2 { // memory.swap.max: no swap
			v = 0
		}
		path := filepath.Join(dir, f)
		if i > 0 { // the swap limit only where the kernel accounts swap
			if _, err := os.Stat(path); err != nil {
				continue
			}
		}
		got, err := writeAndCheck(path, v)
		if err != nil {
			return &UnavailableError{What: what, Err: err}
		}
		if err := l.guard.watch(path, got); err != nil {
			return &UnavailableError{What: what, Err: fmt.Errorf("cannot watch %s: %w", path, err)}
		}
	}
	ev, err := os.Open(filepath.Join(dir, evFile))
	if err != nil {
		return &UnavailableError{What: what, Err: fmt.Errorf("cannot read what hits the limit: %w", err)}
	}
	l.watchMoves(dir, controller, v2)
	if controller == "pids" {
		l.pidsEv = &eventsFile{f: ev, key: evKey}
		if f, err := os.Open(filepath.Join(dir, "pids.peak")); err == nil { // Linux 6.1+
			l.pidsPeak = &peakFile{f: f, max: value}
		}
	} else {
		l.memEv = &eventsFile{f: ev, key: evKey}
	}
	return nil
}

// limitFiles names the files of a limit: the limit, then the swap limit
// (memory only), then the events file and its key.
func limitFiles(controller string, v2 bool) (limits []string, events, key string) {
	switch {
	case controller == "pids":
		return []string{"pids.max"}, "pids.events", "max"
	case v2:
		return []string{"memory.max", "memory.swap.max"}, "memory.events", "oom_kill"
	default: // v1: memsw is memory plus swap, so equal to the limit means no swap
		return []string{"memory.limit_in_bytes", "memory.memsw.limit_in_bytes"}, "memory.oom_control", "oom_kill"
	}
}

// writeAndCheck writes v and reads it back: the kernel rounds memory
// limits down to a page, never up, and never to nothing. It returns what
// the file reads.
func writeAndCheck(path string, v int64) (string, error) {
	if err := os.WriteFile(path, []byte(strconv.FormatInt(v, 10)), 0); err != nil {
		return "", fmt.Errorf("writing %d to %s: %w", v, path, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading back %s: %w", path, err)
	}
	text := strings.TrimSpace(string(b))
	got, err := strconv.ParseInt(text, 10, 64)
	if err != nil || got > v || (v > 0 && got <= 0) || v-got >= 1<<16 {
		return "", fmt.Errorf("%s reads %q after writing %d", path, text, v)
	}
	return text, nil
}

// SweepStale runs the start-up sweep Open deferred (Options.DeferSweep):
// the stale leaves of dead shellsups in the leaf's parent and in the v1
// pids and memory cgroups are killed and removed, within 2 s. It does
// nothing the second time, or when Open swept. It may run beside anything
// but Open: it touches none of the leaf's own state.
func (l *Leaf) SweepStale() {
	if f := l.sweep; f != nil {
		l.sweep = nil
		f()
	}
}

// CgroupFD is the v2 leaf's directory fd for SysProcAttr.CgroupFD, or -1
// without a v2 leaf.
func (l *Leaf) CgroupFD() int { return l.dirFD }

// Dir is the v2 leaf's directory, "" without one.
func (l *Leaf) Dir() string { return l.dir }

// PlaceThread moves the calling OS thread into the v1 leaves, so that a
// process it forks is born in them, and returns the function that moves it
// back. The caller holds runtime.LockOSThread from before PlaceThread until
// after the returned function; if moving back fails the caller must not
// unlock, so that the Go runtime retires the thread with the goroutine.
func (l *Leaf) PlaceThread() (restore func() error, err error) {
	tid := []byte(strconv.Itoa(unix.Gettid()))
	moved := 0
	restore = func() error {
		var errs []error
		for _, v := range l.v1[:moved] {
			if err := os.WriteFile(filepath.Join(v.home, "tasks"), tid, 0); err != nil {
				errs = append(errs, fmt.Errorf("moving the forking thread back to %s: %w", v.home, err))
			}
		}
		return errors.Join(errs...)
	}
	for _, v := range l.v1 {
		if err := os.WriteFile(filepath.Join(v.dir, "tasks"), tid, 0); err != nil {
			return restore, fmt.Errorf("moving the forking thread into %s: %w", v.dir, err)
		}
		moved++
	}
	l.guard.forget() // those writes were shellsup's own
	return restore, nil
}

// Name is "cgroup" with a v2 leaf, "cgroup-v1" with v1 limits only.
func (l *Leaf) Name() string {
	if l.dir == "" {
		return TierV1Name
	}
	return TierName
}

// Term does nothing: the /proc walk's SIGTERM pass reaches every process
// of the leaf, which is always a subset of shellsup's descendants.
func (l *Leaf) Term() error { return nil }

// Kill freezes the leaf (a frozen process cannot fork), kills everything
// in it and its descendants with cgroup.kill, and waits, bounded, until
// cgroup.events says "populated 0". Without a v2 leaf it does nothing.
func (l *Leaf) Kill() error {
	if l.dir == "" || l.closed {
		return nil
	}
	_, ferr := l.freeze.Write([]byte("1"))            // kill works without it; it only closes the fork window sooner
	l.killed = append(l.killed, procsBelow(l.dir)...) // frozen: the list cannot grow
	if _, err := l.kill.Write([]byte("1")); err != nil {
		return fmt.Errorf("writing cgroup.kill of %s: %w", l.dir, err)
	}
	if !waitUnpopulated(l.events, killLanding) && (onlyZombieLeaders(l.dir) || !waitUnpopulated(l.events, populatedWait-killLanding)) {
		return errors.Join(ferr, fmt.Errorf("%s still populated after cgroup.kill", l.dir))
	}
	return nil
}

// killLanding is how long Kill waits for cgroup.kill to empty the leaf
// before it looks at what is left. The kernel's cgroup.kill does not kill a
// process whose leader thread exited while its other threads run (the
// leader shows Z: a server that calls pthread_exit in main): measured on
// 6.18, such a process lived on until its threads ended by themselves. The
// /proc walk after Kill signals it by pid, which reaches the whole thread
// group, so waiting populatedWait for it would only add a second.
const killLanding = 50 * time.Millisecond

// onlyZombieLeaders reports whether every process still in the leaf (or
// below) is a zombie leader with live threads, the kind cgroup.kill leaves.
// It stops at the first other process: one still dying is worth the wait.
func onlyZombieLeaders(dir string) bool {
	for _, pid := range procsBelow(dir) {
		st, err := procstat.Read("/proc", pid)
		if err == nil && (st.State != 'Z' || !procstat.OtherThreads("/proc", pid)) {
			return false
		}
	}
	return true
}

// KilledPIDs are the processes that were in the leaf when Kill wrote
// cgroup.kill. The cleanup counts each once, though the /proc walk that
// follows may find them as zombies not yet reaped and kill them again.
func (l *Leaf) KilledPIDs() []int { return l.killed }

// Populated reads cgroup.events: is any process left in the leaf or below?
func (l *Leaf) Populated() (bool, error) {
	if l.events == nil {
		return false, errors.New("no cgroup v2 leaf")
	}
	return populated(l.events)
}

// Stats are what hit the limits; final after Close.
func (l *Leaf) Stats() Stats {
	if l.closed {
		return l.stats
	}
	return l.readStats()
}

func (l *Leaf) readStats() Stats {
	var s Stats
	if l.pidsEv != nil {
		s.PidsLimitHit = readKey(l.pidsEv.f, l.pidsEv.key)
	}
	if l.memEv != nil {
		s.OOMKills = readKey(l.memEv.f, l.memEv.key)
	}
	s.Tampered = append(l.guard.tampered(), l.left.notes()...)
	if p := l.pidsPeak; p != nil {
		if n, err := strconv.ParseInt(readAt0(p.f), 10, 64); err == nil && n > p.max {
			s.Tampered = append(s.Tampered, fmt.Sprintf("pids.peak %d over pids.max %d: processes were moved into the leaf from outside its limit", n, p.max))
		}
	}
	return s
}

// Close records the stats (the limit files read back included) and
// removes the leaves and any cgroups the command made below them, all by
// one deadline (rmdirWait). A leaf still populated (a process in
// uninterruptible sleep outlived the cleanup), or whose sub-cgroups were
// not all removed by the deadline, is left in place for Sweep and named
// in Stats.Left. It is idempotent.
func (l *Leaf) Close() error {
	if l.closed {
		return l.closeEr
	}
	l.stats = l.readStats()
	l.closed = true
	for _, e := range []*eventsFile{l.pidsEv, l.memEv} {
		if e != nil {
			e.f.Close() // read-only
		}
	}
	if l.pidsPeak != nil {
		l.pidsPeak.f.Close() // read-only
	}
	l.guard.close()
	// A process the /proc walk could not kill (reported there as a
	// straggler) pins the leaf: it is left for the sweep that follows this
	// shellsup's exit rather than waited for.
	defer l.closeV1()
	if p, err := l.Populated(); err == nil && p {
		l.stats.Left = l.dir
		l.closeV2Files()
		return nil
	}
	l.closeV2Files()
	deadline := time.Now().Add(rmdirWait)
	var errs []error
	for _, dir := range l.here() {
		err := removeBy(dir, deadline)
		if errors.Is(err, errDeadline) {
			l.stats.Left = dir // empty cgroups only: not a failure of the cleanup
			continue
		}
		errs = append(errs, err)
	}
	l.closeEr = errors.Join(errs...)
	return l.closeEr
}

// here are the leaves where they are now: a v1 leaf the command renamed
// (within its parent: v1 allows it, v2 does not) is found by its inode and
// removed under its new name; one already removed is left out.
func (l *Leaf) here() []string {
	var out []string
	if l.dir != "" {
		out = append(out, l.dir)
	}
	for _, v := range l.v1 {
		if at := v.held.path(v.dir); at != "" {
			out = append(out, at)
		}
	}
	return out
}

// closeV1 closes the v1 leaves' descriptors, releasing their locks: after
// their removal, so that no sweep judges them while this shellsup lives.
func (l *Leaf) closeV1() {
	for i := range l.v1 {
		l.v1[i].held.close()
	}
}

// populated reads "populated N" from an open cgroup.events.
func populated(events *os.File) (bool, error) {
	buf := make([]byte, 256)
	n, err := events.ReadAt(buf, 0)
	if n == 0 && err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(buf[:n]), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return v != "0", nil
		}
	}
	return false, errors.New("no populated key in cgroup.events")
}

// waitUnpopulated polls cgroup.events (the kernel signals a change with
// POLLPRI) until "populated 0" or the wait is over.
func waitUnpopulated(events *os.File, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		if p, err := populated(events); err != nil || !p {
			return err == nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		fds := []unix.PollFd{{Fd: int32(events.Fd()), Events: unix.POLLPRI}}
		_, _ = linux.Poll(fds, int(left.Milliseconds())+1)
	}
}

// readKey reads "KEY N" from a flat-keyed cgroup file; 0 when absent.
func readKey(f *os.File, key string) int64 {
	buf := make([]byte, 4096)
	n, _ := f.ReadAt(buf, 0)
	for _, line := range strings.Split(string(buf[:n]), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			x, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return x
		}
	}
	return 0
}

// HasV1 says whether a limit lives in a v1 leaf, which the forking thread
// must join (PlaceThread).
func (l *Leaf) HasV1() bool { return len(l.v1) > 0 }
