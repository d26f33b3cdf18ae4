//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTimensSweepSparesLiveRun is the review's finding (2026-12-02): the
// kernel shows a process's start time shifted by the *reader's* boottime
// offset, so a sweep from another time namespace (`unshare -T`, or
// `unshare -U -r -T` with no privilege) found every live leaf's start time
// wrong and killed the run in it (exit 137); so did the start-up sweep of
// an ordinary run there, and the other way round (a run in a time
// namespace, a sweep from the host). A leaf now records its maker's time
// namespace and a sweep judges only the leaves of its own.
func TestTimensSweepSparesLiveRun(t *testing.T) {
	needCgroupTier(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare")
	}
	if _, err := os.Stat("/proc/self/ns/time"); err != nil {
		t.Skip("needs time namespaces")
	}
	bin, dir := unprivileged(t)
	for _, who := range []string{"root", "nobody"} {
		for _, where := range []string{"sweeper in timens", "run in timens"} {
			t.Run(who+"/"+where, func(t *testing.T) {
				got := timensRace(t, bin, dir, who, where == "run in timens")
				assert.Contains(t, got, "B ran\nB exit 0\n")
				assert.Regexp(t, `left \S+/shellsup-\d+-\d+-\d+-\d+-[0-9a-f]{32} alone: made in another time namespace`, got,
					"the sweep says why it left A's leaf")
				assert.Contains(t, got, "A exit 0\nup\nalive\n", "the live run is never killed")
			})
		}
	}
}

// timensRace runs A (a live run in a private parent cgroup) and, while A
// is up, B (an ordinary run: its start-up sweep) and `shellsup sweep`,
// with A or B in a time namespace with a boottime offset of 100000 s, as
// root or as nobody (the parent delegated to nobody, `unshare -U -r -T`).
func timensRace(t *testing.T, bin, dir, who string, runInTimens bool) string {
	parent := filepath.Join(unified, fmt.Sprintf("shellsup-test-timens-%d-%d", os.Getpid(), time.Now().UnixNano()))
	require.NoError(t, os.MkdirAll(filepath.Join(parent, "run"), 0o755))
	t.Cleanup(func() { removeTestParent(parent) })
	as, ns := "", "unshare -T --boottime 100000"
	if who == "nobody" {
		require.NoError(t, exec.Command("chown", "-R", "nobody:nogroup", parent).Run())
		as, ns = "setpriv --reuid=nobody --regid=nogroup --clear-groups", "unshare -U -r -T --boottime 100000"
	}
	nsA, nsB := "", ns
	if runInTimens {
		nsA, nsB = ns, ""
	}
	done := filepath.Join(dir, "b.done")
	_ = os.Remove(done)
	aOut := filepath.Join(dir, "a.out")
	script := fmt.Sprintf(`echo $$ > %[1]s/run/cgroup.procs || exit 97
%[2]s %[3]s %[5]s --cgroup %[1]s -- 'echo up; i=0; until [ -e %[6]s ]; do i=$((i+1)); [ $i -lt 2000 ] || exit 99; sleep 0.01; done; echo alive' > %[7]s 2>&1 & a=$!
i=0; until grep -q up %[7]s; do i=$((i+1)); [ $i -lt 3000 ] || exit 98; sleep 0.01; done
%[2]s %[4]s %[5]s --quiet --cgroup %[1]s -- 'echo B ran'; echo "B exit $?"
%[2]s %[4]s %[5]s sweep --cgroup %[1]s 2>&1; echo "sweep exit $?"
touch %[6]s
wait $a; echo "A exit $?"; cat %[7]s`, parent, as, nsA, nsB, bin, done, aOut)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
	cmd.Dir = dir
	got, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", got)
	return string(got)
}

// removeTestParent kills what a failed test left in the parent's leaves
// and removes them and the parent.
func removeTestParent(parent string) {
	leaves, _ := filepath.Glob(filepath.Join(parent, "*"))
	for _, l := range leaves {
		if fi, err := os.Stat(l); err == nil && fi.IsDir() {
			_ = os.WriteFile(filepath.Join(l, "cgroup.kill"), []byte("1"), 0)
			for i := 0; i < 100 && os.Remove(l) != nil; i++ {
				time.Sleep(10 * time.Millisecond) // no event for "removable"
			}
		}
	}
	_ = os.Remove(parent)
}
