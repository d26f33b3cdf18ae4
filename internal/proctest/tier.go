package proctest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// TierEnv names the containment tier a test run forces on every run of the
// shellsup binary: "subreaper" (--no-cgroup), "cgroup" (--require cgroup)
// or "pidns" (--pidns). Unset, the binary picks its default. `make test`
// runs the integration suite once per tier.
const TierEnv = "SHELLSUP_TEST_TIER"

// tierFlags are the options each forced tier adds to a run.
var tierFlags = map[string]string{
	"subreaper": "--no-cgroup",
	"cgroup":    "--require cgroup",
	"pidns":     "--pidns",
}

// Tier is the tier forced on this test run, "" for none.
func Tier() string { return os.Getenv(TierEnv) }

// CgroupByDefault reports whether shellsup gets the cgroup tier without
// options here: root, with shellsup's own cgroup2 directory writable.
func CgroupByDefault() bool {
	if os.Geteuid() != 0 || Tier() == "subreaper" {
		return false
	}
	_, err := os.Stat("/sys/fs/cgroup/unified/cgroup.procs")
	return err == nil
}

// Containment is what start.containment says for a run of this test run,
// with --pidns if pidns is true.
func Containment(pidns bool) string {
	var tiers []string
	if pidns || Tier() == "pidns" {
		tiers = append(tiers, "pidns")
	}
	if CgroupByDefault() || Tier() == "cgroup" {
		tiers = append(tiers, "cgroup")
	}
	return strings.Join(append(tiers, "subreaper"), "+")
}

// wrapForTier replaces the shellsup binary at path by a script that runs it
// with the forced tier's options (subcommands and --help/--version as
// given), and moves the binary to real/shellsup beside it, so that its comm
// stays "shellsup". exec keeps the pid: the script is not in the tree.
func wrapForTier(path string) error {
	tier := Tier()
	flags, ok := tierFlags[tier]
	if !ok {
		return fmt.Errorf("%s=%q: want subreaper, cgroup or pidns", TierEnv, tier)
	}
	real := filepath.Join(filepath.Dir(path), "real", filepath.Base(path))
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		return err
	}
	if err := os.Rename(path, real); err != nil {
		return err
	}
	script := fmt.Sprintf(`#!/bin/sh
case "$1" in decode|sweep|--help|-help|-h|--version|-version) exec %[1]q "$@";; esac
exec %[1]q %[2]s "$@"
`, real, flags)
	return os.WriteFile(path, []byte(script), 0o755)
}

// Unwrapped is the shellsup binary itself behind path, which is the tier
// wrapper on a run that forces a tier: for a test that copies the binary
// (to run it as another user) or measures its exec, and runs it with
// options of its own.
func Unwrapped(path string) string {
	real := filepath.Join(filepath.Dir(path), "real", filepath.Base(path))
	if _, err := os.Stat(real); err == nil {
		return real
	}
	return path
}
