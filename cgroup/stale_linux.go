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
)

// v1Controllers are the v1 hierarchies shellsup makes leaves in.
var v1Controllers = []string{"pids", "memory"}

// Swept is one leaf Sweep removed, or, with Left set, one it found and
// left alone because its owner cannot be seen from here.
type Swept struct {
	Path   string // the leaf's directory
	Killed int    // processes that were still in it
	Left   string // why the leaf was left alone; "" when it was removed
}

// startSweepWait bounds the sweep at every start: the leaves it did not
// reach are swept by the next start or by `shellsup sweep`.
const startSweepWait = 2 * time.Second

// Sweep kills the processes of every stale leaf in the v2 parent ("" means
// shellsup's own cgroup) and in shellsup's own v1 pids and memory cgroups,
// and removes the leaves. A leaf is judged only if it was made in this
// process's PID namespace, time namespace and boot and /proc shows that
// PID namespace; it is
// stale when its shellsup's pid is gone or has another start time. A leaf
// whose shellsup is alive, or cannot be seen from here, is never touched:
// the second kind is listed with Left saying why. The error joins the
// leaves that could not be removed; the others are still swept.
func Sweep(h Host, parent string) ([]Swept, error) {
	me, err := self(h.Proc)
	if err != nil {
		return nil, err
	}
	return sweep(h, parent, me, procShowsSelf(h.Proc, me.pid), time.Time{})
}

// sweep is Sweep as me; a non-zero until ends it early (the leaves not
// reached are left for the next sweep).
func sweep(h Host, parent string, me owner, seesOwn bool, until time.Time) ([]Swept, error) {
	if parent == "" {
		parent = h.Self
	}
	var out []Swept
	var errs []error
	dirs := []string{}
	if h.Unified != "" && parent != "" {
		dirs = append(dirs, parent) // first: cgroup.kill also empties the v1 leaves of the same run
	}
	for _, c := range v1Controllers {
		if d, ok := h.V1[c]; ok {
			dirs = append(dirs, d)
		}
	}
	j := judge{proc: h.Proc, me: me, seesOwn: seesOwn, until: until}
	for _, d := range dirs {
		s, err := j.sweepDir(d)
		out = append(out, s...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// judge is one sweep's view: who is sweeping and through which /proc.
type judge struct {
	proc    string
	me      owner
	seesOwn bool
	until   time.Time // zero: no bound
}

// sweepDir sweeps the stale leaves directly under dir.
func (j judge) sweepDir(dir string) ([]Swept, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	var out []Swept
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		leaf := filepath.Join(dir, e.Name())
		switch j.verdict(e.Name()) {
		case foreign:
			out = append(out, Swept{Path: leaf, Left: j.whyForeign(e.Name())})
			continue
		case dead:
		default:
			continue
		}
		if !j.until.IsZero() && time.Now().After(j.until) {
			return out, errors.Join(errs...)
		}
		live, unlock := lockedByLive(j.proc, leaf)
		if live {
			out = append(out, Swept{Path: leaf, Left: "its name says its shellsup is gone, but a live shellsup holds it (a v1 leaf renamed by a command)"})
			continue
		}
		n, err := killLeaf(j.proc, leaf)
		if err == nil {
			err = removeLeaf(leaf, rmdirWait)
		}
		unlock()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, Swept{Path: leaf, Killed: n})
	}
	return out, errors.Join(errs...)
}

// whyForeign says why a leaf of another namespace or boot is left alone.
func (j judge) whyForeign(name string) string {
	o, _ := parseOwner(name)
	switch {
	case o.boot != j.me.boot:
		return "made in another boot (" + o.boot + ")"
	case o.ns != j.me.ns:
		return fmt.Sprintf("made in another PID namespace (pid:[%d]; this is pid:[%d]); sweep it from there", o.ns, j.me.ns)
	case o.timens != j.me.timens:
		return fmt.Sprintf("made in another time namespace (time:[%d]; this is time:[%d]), whose start times read differently; sweep it from there", o.timens, j.me.timens)
	default:
		return j.proc + " does not show this shellsup's own PID namespace, so no pid in it can be judged"
	}
}

// stale says whether name is a leaf of mine whose shellsup is gone.
func stale(proc, name string) bool {
	me, err := self(proc)
	return err == nil && judge{proc: proc, me: me, seesOwn: procShowsSelf(proc, me.pid)}.verdict(name) == dead
}

// killLeaf kills every process in leaf and below and waits for them to
// leave it: cgroup.kill in v2, then killMember for what it skipped; in v1
// (no cgroup.kill), SIGKILL through a pidfd to each listed process found a
// member of the leaf after its pidfd was opened. It returns how many
// processes were in it.
func killLeaf(proc, leaf string) (int, error) {
	n := len(procsBelow(leaf))
	if n == 0 {
		return 0, nil
	}
	if err := os.WriteFile(filepath.Join(leaf, "cgroup.kill"), []byte("1"), 0); err == nil {
		return n, waitEmpty(proc, leaf)
	}
	deadline := time.Now().Add(populatedWait)
	for pids := procsBelow(leaf); len(pids) > 0; pids = procsBelow(leaf) {
		if time.Now().After(deadline) {
			return n, fmt.Errorf("%s still holds %d processes after SIGKILL", leaf, len(pids))
		}
		for _, p := range pids {
			killMember(proc, p, filepath.Base(leaf))
		}
		time.Sleep(10 * time.Millisecond) // no event for "v1 cgroup empty"
	}
	return n, nil
}

// killMember SIGKILLs pid if it is a member of the cgroup called leaf (in
// any hierarchy) through a pidfd opened before the membership was read:
// the signal can only reach the process the pidfd names, and if that one
// is alive for the signal it was alive when /proc/PID/cgroup was read, so
// the read was about it and not about a process that took its pid since
// it was listed.
func killMember(proc string, pid int, leaf string) {
	fd, err := linux.PidfdOpen(pid)
	if err != nil {
		return // gone
	}
	defer unix.Close(fd) // a pidfd holds nothing to flush
	if !memberOf(proc, pid, leaf) {
		return
	}
	_ = linux.PidfdSendSignal(fd, unix.SIGKILL) // ESRCH: it exited meanwhile
}

// memberOf says whether /proc/PID/cgroup puts pid in a cgroup named leaf
// or below one.
func memberOf(proc string, pid int, leaf string) bool {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && slices.Contains(strings.Split(parts[2], "/"), leaf) {
			return true
		}
	}
	return false
}

// waitEmpty waits, bounded, for cgroup.events of a v2 leaf to say
// "populated 0" after cgroup.kill. cgroup.kill skips a process whose leader
// thread has exited while other threads run (see killLanding): each pid
// still listed once the kill has landed is SIGKILLed through killMember,
// whose pidfd signal reaches the whole thread group.
func waitEmpty(proc, leaf string) error {
	f, err := os.Open(filepath.Join(leaf, "cgroup.events"))
	if err != nil {
		return err
	}
	defer f.Close() // read-only
	if waitUnpopulated(f, killLanding) {
		return nil
	}
	for _, p := range procsBelow(leaf) {
		killMember(proc, p, filepath.Base(leaf))
	}
	if !waitUnpopulated(f, populatedWait) {
		return fmt.Errorf("%s still populated %v after cgroup.kill", leaf, populatedWait)
	}
	return nil
}

// procsBelow lists the pids in leaf's cgroup.procs and its sub-cgroups'.
func procsBelow(leaf string) []int {
	var pids []int
	_ = filepath.WalkDir(leaf, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(f); err == nil {
				pids = append(pids, p)
			}
		}
		return nil
	})
	return pids
}
