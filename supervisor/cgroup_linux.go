package supervisor

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/shellsup/shellsup/cgroup"
	"github.com/shellsup/shellsup/reaper"
	"github.com/shellsup/shellsup/request"
)

// wantsCgroup says whether the run may not go without its cgroup: a limit,
// --require cgroup or --cgroup was asked for.
func wantsCgroup(cfg Config) bool {
	return cfg.MaxProcs > 0 || cfg.MaxMemory > 0 || cfg.Require == RequireCgroup || cfg.CgroupParent != ""
}

// setupCgroup makes the run's leaf and adds it to cont as a tier. Where no
// leaf can be made and nothing asked for one, the run stays in the tiers
// it has, silently; otherwise the error is the refusal.
func setupCgroup(cfg Config, cont *reaper.Containment) (*cgroup.Leaf, error) {
	if seamNoContainment() || cfg.NoCgroup {
		return nil, nil
	}
	h, err := cgroupHost()
	if err != nil {
		if wantsCgroup(cfg) {
			return nil, &cgroup.UnavailableError{What: "finding the cgroup hierarchies", Err: err}
		}
		return nil, nil
	}
	leaf, err := cgroup.Open(h, cgroup.Options{
		Parent: cfg.CgroupParent, Require: cfg.Require == RequireCgroup,
		MaxProcs: cfg.MaxProcs, MaxMemory: cfg.MaxMemory,
		DeferSweep: true, // sweepBeside runs it once bash is started
	})
	if err != nil {
		if wantsCgroup(cfg) {
			return nil, err
		}
		return nil, nil
	}
	cont.AddTier(leaf)
	return leaf, nil
}

// sweepBeside runs the start-up sweep of stale leaves (those of shellsups
// that are gone) beside the command, and in a run with a private TMPDIR
// the sweep of those stale shellsups left: nothing before bash's start
// needs them. It returns the wait for them, which run defers, so the
// sweep is over before shellsup exits; the leaves' is bounded (2 s), and
// both are best effort, as they were before the spawn.
func sweepBeside(leaf *cgroup.Leaf, cfg Config) (wait func()) {
	tmp := cfg.Sandbox != nil && cfg.Sandbox.TmpDir != ""
	if leaf == nil && !tmp {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if leaf != nil {
			leaf.SweepStale()
		}
		if tmp {
			_, _ = sweepTmp() // a directory left is left for the next sweep
		}
	}()
	return func() { <-done }
}

// cgroupHost is this machine's cgroups, or in a test build a scratch tree
// named by SHELLSUP_TEST_CGROUP_ROOT standing in for the cgroup2 mount.
func cgroupHost() (cgroup.Host, error) {
	if root := seamCgroupRoot(); root != "" {
		return cgroup.Host{Proc: "/proc", Unified: root, Self: root, V1: map[string]string{}}, nil
	}
	return cgroup.Discover()
}

// checkRequired refuses a run whose --require tier is not in force.
//
// It runs before the spawn: --pidns, the one way to the pidns tier, puts it
// in force at the spawn or refuses the run there (containment_unavailable).
func checkRequired(cfg Config, cont *reaper.Containment) error {
	if cfg.Require == "" || strings.Contains("+"+cont.Name()+"+", "+"+cfg.Require+"+") {
		return nil
	}
	if cfg.Require == RequirePidns && cfg.PIDNamespace {
		return nil
	}
	hint := ""
	if cfg.Require == RequirePidns {
		hint = "; add --pidns"
	}
	return fmt.Errorf("--require %s: the %s tier is not in force (containment is %q)%s", cfg.Require, cfg.Require, cont.Name(), hint)
}

// closeLeaf removes the leaf of a run that never spawned.
func closeLeaf(leaf *cgroup.Leaf) {
	if leaf != nil {
		_ = leaf.Close() // nothing ran in it; a leftover is swept at the next start
	}
}

// leafStats are what hit the limits; zero without a leaf.
func leafStats(leaf *cgroup.Leaf) cgroup.Stats {
	if leaf == nil {
		return cgroup.Stats{}
	}
	return leaf.Stats()
}

// leafDir is the v2 leaf's directory, "" without one.
func leafDir(leaf *cgroup.Leaf) string {
	if leaf == nil {
		return ""
	}
	return leaf.Dir()
}

// intoCgroup makes the fork clone bash straight into the v2 leaf.
func intoCgroup(sys *syscall.SysProcAttr, leaf *cgroup.Leaf) {
	if leaf != nil && leaf.CgroupFD() >= 0 {
		sys.UseCgroupFD = true
		sys.CgroupFD = leaf.CgroupFD()
	}
}

// forkInLeaf runs fork on a thread that sits in the leaf's v1 cgroups for
// the duration, so bash is born in them (v1 has no CLONE_INTO_CGROUP). The
// fork runs on its own goroutine: should the thread fail to move back, it
// stays locked and the Go runtime retires it when the goroutine ends,
// rather than leaving a shellsup thread in the leaf.
func forkInLeaf(leaf *cgroup.Leaf, fork func() (int, error)) (int, error) {
	if leaf == nil || !leaf.HasV1() {
		return fork()
	}
	type result struct {
		pid int
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		var r result
		restore, err := leaf.PlaceThread()
		if err != nil {
			r.err = fmt.Errorf("placing bash in the v1 limit cgroups: %w", err)
		} else {
			r.pid, r.err = fork()
		}
		if restore() == nil {
			runtime.UnlockOSThread()
		}
		done <- r
	}()
	r := <-done
	return r.pid, r.err
}

// raiseOOMScore sets bash's oom_score_adj to request.WorkloadOOMScore unless it is
// higher already. Raising needs no privilege. bash is written to right
// after the fork returns, before a login shell has read its profile, so its
// children inherit the value.
func raiseOOMScore(pid int) {
	path := "/proc/" + strconv.Itoa(pid) + "/oom_score_adj"
	if b, err := os.ReadFile(path); err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && v >= request.WorkloadOOMScore {
			return
		}
	}
	_ = os.WriteFile(path, []byte(strconv.Itoa(request.WorkloadOOMScore)), 0) // bash may already be gone
}
