//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
)

// TestPidnsAutoWithoutALeaf: --pidns-auto (the bindings' default) puts a
// run that gets no cgroup v2 leaf into a PID namespace: as nobody with no
// delegated cgroup, the command's pid 1 is the namespace's init; without
// the flag it is the host's.
func TestPidnsAutoWithoutALeaf(t *testing.T) {
	bin, dir := unprivileged(t)
	if proctest.Tier() != "" {
		t.Skip("the tier wrapper is not used here, but the plain run must be plain")
	}
	out, code := asNobody(t, bin, dir, "--pidns-auto", "--", "cat /proc/1/comm")
	require.Equal(t, 0, code, out)
	assert.True(t, strings.HasPrefix(out, "shellsup-init\n"), "pid 1 is the namespace's init: %q", out)

	out, code = asNobody(t, bin, dir, "--", "cat /proc/1/comm")
	require.Equal(t, 0, code, out)
	assert.False(t, strings.HasPrefix(out, "shellsup-init\n"), "without --pidns-auto, no namespace: %q", out)
}

// TestPidnsAutoKeepsTheLeaf: where a v2 leaf is made, --pidns-auto changes
// nothing (the harness can kill the leaf if shellsup dies); with
// --no-cgroup there is no leaf, so the run goes into a namespace. The
// start frame and the cleanup name the tier.
func TestPidnsAutoKeepsTheLeaf(t *testing.T) {
	needCgroupTier(t)
	if proctest.Tier() != "" {
		t.Skip("compares against the default tiers")
	}
	r := runShellsup(t, opts{args: []string{"--pidns-auto"}, command: "true"})
	tot := requireTotals(t, r)
	assert.Equal(t, "cgroup+subreaper", r.start.Containment)
	assert.NotEmpty(t, r.start.Cgroup)
	assert.Equal(t, "cgroup+subreaper", tot.Cleanup.Tier)

	r = runShellsup(t, opts{args: []string{"--pidns-auto", "--no-cgroup"}, command: "true"})
	tot = requireTotals(t, r)
	assert.Equal(t, "pidns+subreaper", r.start.Containment)
	assert.Equal(t, "pidns+subreaper", tot.Cleanup.Tier)
}

// TestPidnsAutoFallsBack: where the namespaces cannot be had (here: a user
// namespace the test made, whose max_pid_namespaces it set to 0),
// --pidns-auto runs the command in the subreaper tier, while --pidns
// refuses the run, as before.
func TestPidnsAutoFallsBack(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a user namespace with a namespace limit")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare")
	}
	bin, dir := unprivileged(t)
	script := `echo 0 > /proc/sys/user/max_pid_namespaces || exit 99
"$0" --pidns-auto -- 'cat /proc/1/comm; echo ran'; echo "auto=$?"
"$0" --pidns -- 'echo forced ran'; echo "forced=$?"`
	cmd := exec.Command("unshare", "--user", "--map-root-user", "--fork", "sh", "-c", script, bin)
	cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	out := string(b)
	require.NoError(t, err, out)
	assert.Contains(t, out, "\nran\n", out)
	assert.NotContains(t, out, "shellsup-init", "no namespace could be made: %s", out)
	assert.Contains(t, out, "auto=0", out)
	assert.Contains(t, out, "creating a PID namespace for --pidns", out)
	assert.Contains(t, out, "forced=125", out)
	assert.NotContains(t, out, "forced ran", out)
}

// TestPidnsAutoInADelegatedCgroup: as nobody in a cgroup delegated to it,
// the command could move a process out of its leaf into the delegated
// parent, beyond the leaf's cgroup.kill once shellsup is dead (the
// review's F2): --pidns-auto adds the namespace, which holds it anyway; the
// leaf is still made. Without the flag, the cgroup tier alone.
func TestPidnsAutoInADelegatedCgroup(t *testing.T) {
	needCgroupTier(t)
	bin, dir := unprivileged(t)
	deleg := filepath.Join(unified, fmt.Sprintf("shellsup-test-autodeleg-%d", os.Getpid()))
	require.NoError(t, os.Mkdir(deleg, 0o755))
	t.Cleanup(func() { _ = os.Remove(deleg) })
	out, err := exec.Command("id", "-u", "nobody").Output()
	require.NoError(t, err)
	uid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	require.NoError(t, err)
	for _, f := range []string{"", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control"} {
		require.NoError(t, os.Chown(filepath.Join(deleg, f), uid, -1))
	}
	run := func(flags string) string {
		script := fmt.Sprintf(`echo $$ > %s/cgroup.procs && exec setpriv --reuid=nobody --regid=nogroup --clear-groups %s %s --require cgroup -- 'cat /proc/1/comm; sed -n "s/^0:://p" /proc/self/cgroup'`, deleg, bin, flags)
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
		cmd.Dir = dir
		got, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", got)
		return string(got)
	}
	rel := strings.TrimPrefix(deleg, unified)
	got := run("--pidns-auto")
	assert.True(t, strings.HasPrefix(got, "shellsup-init\n"+rel+"/shellsup-"), "a namespace, in a leaf of the delegated cgroup: %q", got)
	got = run("")
	assert.False(t, strings.HasPrefix(got, "shellsup-init\n"), "no namespace without the flag: %q", got)
	assert.Contains(t, got, "\n"+rel+"/shellsup-", got)
}
