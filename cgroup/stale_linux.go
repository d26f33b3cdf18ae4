package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// leafPattern matches the leaves shellsup makes: shellsup-<pid>-<starttime>.
var leafPattern = regexp.MustCompile(`^shellsup-([0-9]+)-([0-9]+)$`)

// v1Controllers are the v1 hierarchies shellsup makes leaves in.
var v1Controllers = []string{"pids", "memory"}

// Swept is one stale leaf removed by Sweep.
type Swept struct {
	Path   string // the leaf's directory
	Killed int    // processes that were still in it
}

// Sweep kills the processes of every stale leaf (shellsup-<pid>-<start>
// whose pid is gone or has another start time) in the v2 parent ("" means
// shellsup's own cgroup) and in shellsup's own v1 pids and memory cgroups,
// and removes the leaves. A leaf whose shellsup is alive is never touched.
// The error joins the leaves that could not be removed; the others are
// still swept.
func Sweep(h Host, parent string) ([]Swept, error) {
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
	for _, d := range dirs {
		s, err := sweepDir(h.Proc, d)
		out = append(out, s...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// sweepDir sweeps the stale leaves directly under dir.
func sweepDir(proc, dir string) ([]Swept, error) {
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
		if !e.IsDir() || !stale(proc, e.Name()) {
			continue
		}
		leaf := filepath.Join(dir, e.Name())
		n, err := killLeaf(leaf)
		if err == nil {
			err = removeLeaf(leaf, rmdirWait)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, Swept{Path: leaf, Killed: n})
	}
	return out, errors.Join(errs...)
}

// stale says whether name is a shellsup leaf whose shellsup is gone: no
// such pid, or a pid with another start time (reused).
func stale(proc, name string) bool {
	m := leafPattern.FindStringSubmatch(name)
	if m == nil {
		return false
	}
	pid, err := strconv.Atoi(m[1])
	if err != nil {
		return false
	}
	start, err := startTime(proc, pid)
	if err != nil {
		return errors.Is(err, os.ErrNotExist) // unreadable for another reason: leave it
	}
	return strconv.FormatUint(start, 10) != m[2]
}

// killLeaf kills every process in leaf and below and waits for them to
// leave it: cgroup.kill in v2, SIGKILL of each listed pid in v1 (which has
// no cgroup.kill). It returns how many processes were in it.
func killLeaf(leaf string) (int, error) {
	n := len(procsBelow(leaf))
	if n == 0 {
		return 0, nil
	}
	if err := os.WriteFile(filepath.Join(leaf, "cgroup.kill"), []byte("1"), 0); err == nil {
		return n, waitEmpty(leaf)
	}
	deadline := time.Now().Add(populatedWait)
	for pids := procsBelow(leaf); len(pids) > 0; pids = procsBelow(leaf) {
		if time.Now().After(deadline) {
			return n, fmt.Errorf("%s still holds %d processes after SIGKILL", leaf, len(pids))
		}
		for _, p := range pids {
			// Read from the cgroup a moment ago; a stale v1 leaf is normally
			// emptied already by its v2 twin's cgroup.kill, so this by-pid
			// kill (and its tiny reuse window) is the rare path.
			_ = unix.Kill(p, unix.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond) // no event for "v1 cgroup empty"
	}
	return n, nil
}

// waitEmpty waits, bounded, for cgroup.events of a v2 leaf to say
// "populated 0".
func waitEmpty(leaf string) error {
	f, err := os.Open(filepath.Join(leaf, "cgroup.events"))
	if err != nil {
		return err
	}
	defer f.Close() // read-only
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
