package supervisor

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shellsup/shellsup/cgroup"
)

// Bounds of --max-procs: the kernel's PID_MAX_LIMIT, and 2 because under a
// v1 pids limit the thread that forks bash counts for the instant of the
// fork (and bash alone can do nothing a limit is for).
const (
	MinProcs      = 2
	MaxProcsLimit = 4 << 20
)

// Tiers --require accepts.
const (
	RequireCgroup = "cgroup"
	RequirePidns  = "pidns"
)

// validateContainment checks --cgroup, --require, --max-procs and
// --max-memory into cfg.
func (a Args) validateContainment(cfg *Config) error {
	if a.MaxProcs != "" {
		v, err := strconv.ParseInt(strings.TrimSpace(a.MaxProcs), 10, 64)
		if err != nil || v < MinProcs || v > MaxProcsLimit {
			return invalid("max-procs must be a whole number of processes, at least %d and at most %d (got %q)", MinProcs, MaxProcsLimit, a.MaxProcs)
		}
		cfg.MaxProcs = v
	}
	if a.MaxMemory != "" {
		v, err := cgroup.ParseBytes(a.MaxMemory)
		if err != nil {
			return invalid("max-memory: %v", err)
		}
		if v < cgroup.MinMemory {
			return invalid("max-memory must be at least %d bytes (4M): a login shell needs that much to start (got %q)", cgroup.MinMemory, a.MaxMemory)
		}
		cfg.MaxMemory = v
	}
	switch a.Require {
	case "", RequireCgroup, RequirePidns:
		cfg.Require = a.Require
	default:
		return invalid("require must be %q or %q (got %q)", RequireCgroup, RequirePidns, a.Require)
	}
	if a.Cgroup != "" {
		if !filepath.IsAbs(a.Cgroup) {
			return invalid("cgroup must be the absolute path of a cgroup v2 directory, e.g. /sys/fs/cgroup/user.slice/my.scope (got %q)", a.Cgroup)
		}
		if st, err := os.Stat(a.Cgroup); err != nil || !st.IsDir() {
			return invalid("cgroup %q is not an existing directory", a.Cgroup)
		}
		cfg.CgroupParent = filepath.Clean(a.Cgroup)
	}
	return nil
}
