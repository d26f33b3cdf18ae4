package supervisor

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shellsup/shellsup/request"
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
		if err != nil {
			v = -1 // not a number: refused with the range
		}
		if err := request.ValidateMaxProcs(v, strconv.Quote(a.MaxProcs)); err != nil {
			return err
		}
		if a.PIDNamespace && v < request.MinProcsPidns {
			return invalid("max-procs must be at least %d with --pidns: the namespace's init (the shellsup binary, a Go program) counts its own threads (got %q)", request.MinProcsPidns, a.MaxProcs)
		}
		cfg.MaxProcs = v
	}
	if a.MaxMemory != "" {
		v, err := request.ParseBytes(a.MaxMemory)
		if err != nil {
			return invalid("max-memory: %v", err)
		}
		if err := request.ValidateMaxMemory(v, strconv.Quote(a.MaxMemory)); err != nil {
			return err
		}
		cfg.MaxMemory = v
	}
	switch a.Require {
	case "", RequireCgroup, RequirePidns:
		cfg.Require = a.Require
	default:
		return invalid("require must be %q or %q (got %q)", RequireCgroup, RequirePidns, a.Require)
	}
	if a.NoCgroup {
		for flag, given := range map[string]bool{"--cgroup": a.Cgroup != "", "--max-procs": a.MaxProcs != "", "--max-memory": a.MaxMemory != "", "--require cgroup": a.Require == RequireCgroup} {
			if given {
				return invalid("--no-cgroup cannot be combined with %s, which needs the cgroup tier", flag)
			}
		}
		cfg.NoCgroup = true
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
