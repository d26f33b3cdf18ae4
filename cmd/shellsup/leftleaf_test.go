//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
)

// escapes is a command that moves a background sleep into each of the
// cgroup.procs files named, prints each one's pid, and exits: the sleeps are
// reparented to shellsup, outside the leaf.
func escapes(files ...string) string {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "sleep 300 & echo $! > %s || exit 9; echo $!\n", f)
	}
	return b.String()
}

// TestLeftTheLeafReportedTampered: a root command escapes --max-procs by
// moving a process into the v1 pids root (the review's F3), or out of the
// v2 leaf into the v2 root. The /proc walk still kills both (the leak check
// of runShellsup), and the cleanup lists each among what was tampered with.
func TestLeftTheLeafReportedTampered(t *testing.T) {
	needCgroupTier(t)
	if _, err := os.Stat("/sys/fs/cgroup/pids/cgroup.procs"); err != nil {
		t.Skip("needs the v1 pids hierarchy (a hybrid host)")
	}
	r := runShellsup(t, opts{
		args:    []string{"--max-procs", "64"},
		command: escapes("/sys/fs/cgroup/pids/cgroup.procs", unified+"/cgroup.procs"),
	})
	tot := requireTotals(t, r)
	require.Equal(t, 0, r.exit, "%s %s", tot.Stdout, tot.Stderr)
	pids := strings.Fields(tot.Stdout)
	require.Len(t, pids, 2, tot.Stdout)
	require.Len(t, tot.Cleanup.Tampered, 2, "%v", tot.Cleanup.Tampered)
	if proctest.Tier() == "pidns" {
		// $! is the namespace's pid; the report gives shellsup's.
		assert.Contains(t, tot.Cleanup.Tampered[0]+tot.Cleanup.Tampered[1], " now in / of the v1 pids hierarchy")
		return
	}
	assert.ElementsMatch(t, []string{
		"left the leaf: pid " + pids[0] + " now in / of the v1 pids hierarchy",
		"left the leaf: pid " + pids[1] + " now in /",
	}, tot.Cleanup.Tampered)
}

// TestLeftTheLeafDelegated: in a delegated v2 cgroup (--cgroup) the
// command moves a process out of its leaf into the delegated parent (the
// review's F2). While shellsup lives, the walk kills it and the cleanup
// reports it; a process that stays in the leaf is not reported.
func TestLeftTheLeafDelegated(t *testing.T) {
	needCgroupTier(t)
	deleg := filepath.Join(unified, fmt.Sprintf("shellsup-test-left-%d", os.Getpid()))
	require.NoError(t, os.Mkdir(deleg, 0o755))
	t.Cleanup(func() { _ = os.Remove(deleg) })
	r := runShellsup(t, opts{
		args:    []string{"--cgroup", deleg},
		command: escapes(deleg+"/cgroup.procs") + "sleep 300 &",
	})
	tot := requireTotals(t, r)
	require.Equal(t, 0, r.exit, "%s %s", tot.Stdout, tot.Stderr)
	rel := strings.TrimPrefix(deleg, unified)
	require.Len(t, tot.Cleanup.Tampered, 1, "%v", tot.Cleanup.Tampered)
	assert.True(t, strings.HasSuffix(tot.Cleanup.Tampered[0], " now in "+rel), "%v", tot.Cleanup.Tampered)
	if proctest.Tier() != "pidns" {
		assert.Equal(t, "left the leaf: pid "+strings.TrimSpace(tot.Stdout)+" now in "+rel, tot.Cleanup.Tampered[0])
	}
}

// TestLeftTheLeafAndCameBack is the third review's finding 3 (2026-12-02):
// a root command leaves its v1 pids leaf, starts more processes than
// --max-procs outside it, and moves them all back before the cleanup, so
// that none is outside when the cleanup looks. The write to the leaf's
// process list after setup, and pids.peak above pids.max, are reported.
func TestLeftTheLeafAndCameBack(t *testing.T) {
	needCgroupTier(t)
	if _, err := os.Stat("/sys/fs/cgroup/pids/cgroup.procs"); err != nil {
		t.Skip("needs the v1 pids hierarchy (a hybrid host)")
	}
	r := runShellsup(t, opts{
		args: []string{"--max-procs", "20", "--no-login"},
		command: `leaf=/sys/fs/cgroup/pids$(grep :pids: /proc/self/cgroup | cut -d: -f3)
echo $$ > /sys/fs/cgroup/pids/cgroup.procs || exit 9
for i in $(seq 30); do sleep 300 & done
for p in $(jobs -p) $$; do echo $p > "$leaf/cgroup.procs"; done
read -r n < "$leaf/pids.current"; echo "$n in the leaf"`, // builtins only once back: no fork is possible
	})
	tot := requireTotals(t, r)
	require.Equal(t, 0, r.exit, "%s %s", tot.Stdout, tot.Stderr)
	var n int
	_, err := fmt.Sscanf(tot.Stdout, "%d in the leaf", &n)
	require.NoError(t, err, "%q %q", tot.Stdout, tot.Stderr)
	require.Greater(t, n, 20, "31 processes moved back (and, under --pidns, the init's threads)")
	joined := strings.Join(tot.Cleanup.Tampered, "\n")
	assert.Contains(t, joined, "cgroup.procs of the v1 pids leaf written after setup: a process was moved in from outside its limits")
	assert.Regexp(t, `pids\.peak \d+ over pids\.max 20`, joined)
}

// TestLeftTheLeafAndCameBackBelow is the fourth review's finding 2
// (2026-12-02): a root command leaves its v1 memory leaf, and comes back
// into a cgroup it made below the leaf rather than into the leaf's own
// process list. A memory charge made outside stays outside, so nothing in
// the leaf's counters shows it; the cgroup made below the leaf is reported.
func TestLeftTheLeafAndCameBackBelow(t *testing.T) {
	needCgroupTier(t)
	if _, err := os.Stat("/sys/fs/cgroup/memory/cgroup.procs"); err != nil {
		t.Skip("needs the v1 memory hierarchy (a hybrid host)")
	}
	r := runShellsup(t, opts{
		args: []string{"--max-memory", "64M", "--no-login"},
		command: `leaf=/sys/fs/cgroup/memory$(grep :memory: /proc/self/cgroup | cut -d: -f3)
mkdir "$leaf/sub" || exit 8
echo $$ > /sys/fs/cgroup/memory/cgroup.procs || exit 9
sleep 300 &
for p in $! $$; do echo $p > "$leaf/sub/cgroup.procs"; done
echo back`,
	})
	tot := requireTotals(t, r)
	require.Equal(t, 0, r.exit, "%s %s", tot.Stdout, tot.Stderr)
	require.Equal(t, "back\n", tot.Stdout)
	joined := strings.Join(tot.Cleanup.Tampered, "\n")
	assert.Contains(t, joined, "a cgroup made below the v1 memory leaf after setup: a process moved into it passes the leaf's own process list")
	assert.NotContains(t, joined, "cgroup.procs of the v1 memory leaf written", "the leaf's own list was not written: the cgroup made below is what shows the move")
}

// TestRenamedLeafReported is the fifth review's finding 1 (2026-12-02): a
// root command renames its own v1 memory leaf (v1 allows a rename within
// the parent), then leaves it with a process that outlives bash. The audit
// reads the list through the leaf's own descriptor, so the process outside
// is reported, and so is the rename; the renamed leaf is removed.
func TestRenamedLeafReported(t *testing.T) {
	needCgroupTier(t)
	if _, err := os.Stat("/sys/fs/cgroup/memory/cgroup.procs"); err != nil {
		t.Skip("needs the v1 memory hierarchy (a hybrid host)")
	}
	renamed := fmt.Sprintf("shellsup-test-renamed-%d", os.Getpid())
	r := runShellsup(t, opts{
		args: []string{"--max-memory", "64M", "--no-login"},
		command: `leaf=/sys/fs/cgroup/memory$(grep :memory: /proc/self/cgroup | cut -d: -f3)
mv "$leaf" "$(dirname "$leaf")/` + renamed + `" || exit 8
echo $$ > /sys/fs/cgroup/memory/cgroup.procs || exit 9
setsid sleep 300 &
echo $!`,
	})
	tot := requireTotals(t, r)
	require.Equal(t, 0, r.exit, "%s %s", tot.Stdout, tot.Stderr)
	joined := strings.Join(tot.Cleanup.Tampered, "\n")
	assert.Contains(t, joined, "the v1 memory leaf renamed after setup")
	if proctest.Tier() != "pidns" {
		assert.Contains(t, joined, "left the leaf: pid "+strings.TrimSpace(tot.Stdout)+" now in ")
	}
	matches, _ := filepath.Glob("/sys/fs/cgroup/memory/*/" + renamed)
	m2, _ := filepath.Glob("/sys/fs/cgroup/memory/" + renamed)
	assert.Empty(t, append(matches, m2...), "the renamed leaf is removed under its new name")
}

// TestAuditWithoutFdsReported is the fifth review's finding 3: the command
// leaves its v1 memory leaf and lowers shellsup's RLIMIT_NOFILE so that
// the audit can open nothing. The list is still read, through the
// descriptor kept since setup, and the result says so.
func TestAuditWithoutFdsReported(t *testing.T) {
	needCgroupTier(t)
	if _, err := os.Stat("/sys/fs/cgroup/memory/cgroup.procs"); err != nil {
		t.Skip("needs the v1 memory hierarchy (a hybrid host)")
	}
	if proctest.Tier() == "pidns" {
		t.Skip("shellsup is not $PPID under --pidns")
	}
	r := runShellsup(t, opts{
		args: []string{"--max-memory", "64M", "--no-login"},
		command: `echo $$ > /sys/fs/cgroup/memory/cgroup.procs || exit 9
setsid sleep 300 &
prlimit --pid $PPID --nofile=5:5 || exit 10`,
	})
	tot := requireTotals(t, r)
	require.Equal(t, 0, r.exit, "%s %s", tot.Stdout, tot.Stderr)
	joined := strings.Join(tot.Cleanup.Tampered, "\n")
	assert.Regexp(t, `left the leaf: pid \d+ now in |could not be read|the descriptor kept since setup`, joined)
}
