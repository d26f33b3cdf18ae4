//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/protocol"
)

// testParent is a cgroup v2 parent of this test's own: every shellsup
// start sweeps its parent, and other tests run shellsups side by side.
func testParent(t *testing.T) string {
	t.Helper()
	parent := filepath.Join(unified, fmt.Sprintf("shellsup-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
	require.NoError(t, os.Mkdir(parent, 0o755))
	t.Cleanup(func() { _ = os.Remove(parent) })
	return parent
}

// TestNestedPidnsSweepSparesLiveRun is the review's reproduction: a
// shellsup inside a PID namespace that shares a cgroup parent with a live
// run A judged A's leaf from its own /proc, where A's pid does not exist,
// and killed A (exit 137 within about a second). Now a sweep judges only
// the leaves of its own namespace and boot.
func TestNestedPidnsSweepSparesLiveRun(t *testing.T) {
	needCgroupTier(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: a nested shellsup makes its own leaf in the shared parent")
	}
	parent := testParent(t)
	bin := proctest.Unwrapped(shellsupBin)
	started := make(chan struct{})
	aPid := 0 // A's shellsup: the test's own child while B runs
	var a result
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		a = runShellsup(t, opts{
			args: []string{"--cgroup", parent}, command: "echo up; sleep 3; echo alive",
			onFrame: func(r *running, f protocol.Frame) {
				if s, ok := f.(*protocol.Start); ok {
					aPid = s.Pid
				}
				if p, ok := f.(*protocol.Progress); ok && strings.Contains(p.Text, "up") {
					close(started)
				}
			},
		})
	}()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("run A did not start")
	}
	b := runShellsup(t, opts{
		bin:  bin, // as given, whatever tier this test run forces
		args: []string{"--pidns", "--no-cgroup"},
		command: fmt.Sprintf("%[1]s --quiet --cgroup %[2]s -- 'echo nested ran'; %[1]s sweep --cgroup %[2]s; %[1]s --quiet -- true",
			bin, parent),
		owned: []int{aPid},
	})
	tb := requireTotals(t, b)
	assert.Contains(t, tb.Stdout, "nested ran")
	assert.Contains(t, tb.Stdout, "made in another PID namespace", "the nested sweep says why it left A's leaf: %s", tb.Stdout)
	wg.Wait()
	ta := requireTotals(t, a)
	require.NotNil(t, ta.ExitCode, "A was killed: %+v", ta.Signal)
	assert.Equal(t, 0, *ta.ExitCode, "run A beside the nested shellsup is never killed")
	assert.Equal(t, "up\nalive\n", ta.Stdout)
}

// leafFile is a prelude that sets $f to the leaf's limit file: v2 if the
// v2 leaf has it, else the v1 CONTROLLER leaf's V1FILE.
func leafFile(v2file, controller, v1file string) string {
	return fmt.Sprintf(`f=%[1]s$(sed -n 's/^0:://p' /proc/self/cgroup)/%[2]s
[ -e "$f" ] || f=/sys/fs/cgroup/%[3]s$(sed -n 's/^[0-9]*:%[3]s://p' /proc/self/cgroup)/%[4]s
`, unified, v2file, controller, v1file)
}

func TestRaisedLimitReportedTampered(t *testing.T) {
	needCgroupTier(t)
	t.Run("pids.max", func(t *testing.T) {
		r := runShellsup(t, opts{
			args:    []string{"--max-procs", "20"},
			command: limitCheck("pids.max", "pids", "pids.max", "20") + leafFile("pids.max", "pids", "pids.max") + `echo max > "$f" && cat "$f"`,
		})
		tot := requireTotals(t, r)
		require.Equal(t, 0, r.exit, "%s", tot.Stdout)
		assert.Equal(t, "max\n", tot.Stdout, "the command raised its own limit (same uid)")
		assert.Equal(t, []string{"pids.max"}, tot.Cleanup.Tampered)
	})
	t.Run("memory", func(t *testing.T) {
		want := fmt.Sprint(64 << 20)
		// v1 wants memsw >= the limit: raise memsw first.
		raise := leafFile("memory.swap.max", "memory", "memory.memsw.limit_in_bytes") + `echo max > "$f" 2>/dev/null || echo -1 > "$f"
` + leafFile("memory.max", "memory", "memory.limit_in_bytes") + `echo max > "$f" 2>/dev/null || echo -1 > "$f"`
		r := runShellsup(t, opts{
			args:    []string{"--max-memory", "64M"},
			command: limitCheck("memory.max", "memory", "memory.limit_in_bytes", want) + raise,
		})
		tot := requireTotals(t, r)
		require.Equal(t, 0, r.exit, "%s", tot.Stdout)
		require.NotEmpty(t, tot.Cleanup.Tampered)
		assert.Subset(t, []string{"memory.max", "memory.limit_in_bytes"}, tot.Cleanup.Tampered[:1], "the memory limit is reported: %v", tot.Cleanup.Tampered)
		assert.Len(t, tot.Cleanup.Tampered, 2, "and the swap limit: %v", tot.Cleanup.Tampered)
	})
	t.Run("written back", func(t *testing.T) {
		r := runShellsup(t, opts{
			args:    []string{"--max-procs", "20"},
			command: leafFile("pids.max", "pids", "pids.max") + `echo max > "$f"; echo 20 > "$f"; cat "$f"`,
		})
		tot := requireTotals(t, r)
		assert.Equal(t, "20\n", tot.Stdout)
		assert.Equal(t, []string{"pids.max"}, tot.Cleanup.Tampered, "a limit raised and put back is still seen")
	})
	t.Run("untouched", func(t *testing.T) {
		r := runShellsup(t, opts{args: []string{"--max-procs", "20", "--max-memory", "64M"}, command: "cat /proc/self/cgroup >/dev/null"})
		assert.Empty(t, requireTotals(t, r).Cleanup.Tampered)
	})
	t.Run("human summary", func(t *testing.T) {
		cmd := exec.Command(shellsupBin, "--max-procs", "20", "--", leafFile("pids.max", "pids", "pids.max")+`echo max > "$f"`)
		cmd.Env = []string{"HOME=" + cleanHome, "PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Contains(t, string(out), "; LIMITS TAMPERED WITH by the command: pids.max;")
	})
}

// TestManySubCgroupsCleanupBounded: the command makes 3000 cgroups below
// its leaf; the cleanup removes them all within its deadline (2 s for the
// removal) and the leaf is gone.
func TestManySubCgroupsCleanupBounded(t *testing.T) {
	needCgroupTier(t)
	r := runShellsup(t, opts{
		args:    []string{"--require", "cgroup"},
		command: `cd ` + unified + `$(sed -n 's/^0:://p' /proc/self/cgroup) && mkdir $(seq -f 'w%g' 1 1000) && mkdir $(seq -f 'w%g/d' 1 1000) && mkdir $(seq -f 'w%g/d/d' 1 1000) && ls -d w*/d/d | wc -l`,
	})
	tot := requireTotals(t, r)
	require.Equal(t, 0, r.exit, "%s", tot.Stdout)
	assert.Equal(t, "1000\n", tot.Stdout)
	assert.Less(t, tot.Cleanup.Ms, int64(2500), "the cleanup is bounded")
	assert.Empty(t, tot.Cleanup.LeafLeft)
	assert.Empty(t, tot.Cleanup.Stragglers)
	assert.NoDirExists(t, r.start.Cgroup, "the leaf and its 3000 sub-cgroups are removed")
	t.Logf("cleanup with 3000 sub-cgroups: %d ms", tot.Cleanup.Ms)
}

// TestNestedPidnsSweepSparesLiveRunAsNobody is the reproduction as user
// nobody in a cgroup delegated to it: run A's leaf belongs to nobody, and
// so does the nested shellsup (in a user and PID namespace of its own),
// which could write A's cgroup.kill. It leaves A alone.
func TestNestedPidnsSweepSparesLiveRunAsNobody(t *testing.T) {
	needCgroupTier(t)
	bin, dir := unprivileged(t)
	deleg := filepath.Join(unified, fmt.Sprintf("shellsup-test-nested-%d", os.Getpid()))
	require.NoError(t, os.Mkdir(deleg, 0o755))
	t.Cleanup(func() { _ = os.Remove(deleg) })
	out, err := exec.Command("id", "-u", "nobody").Output()
	require.NoError(t, err)
	uid := strings.TrimSpace(string(out))
	require.NoError(t, exec.Command("chown", uid, deleg, deleg+"/cgroup.procs", deleg+"/cgroup.threads", deleg+"/cgroup.subtree_control").Run())
	// Move into the delegated cgroup as root, then start A and, once A is
	// up, the nested shellsup, both as nobody.
	script := fmt.Sprintf(`echo $$ > %[1]s/cgroup.procs || exit 97
sp="setpriv --reuid=nobody --regid=nogroup --clear-groups"
$sp %[2]s --require cgroup -- 'echo up; sleep 3; echo alive' > %[3]s/a.out 2>&1 & a=$!
i=0; until grep -q up %[3]s/a.out; do i=$((i+1)); [ $i -lt 3000 ] || exit 98; sleep 0.01; done
$sp %[2]s --pidns --no-cgroup -- "%[2]s --quiet -- 'id -un; echo nested ran'; %[2]s sweep"
wait $a; echo "A exit $?"; cat %[3]s/a.out`, deleg, bin, dir)
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
	cmd.Dir = dir
	got, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", got)
	assert.Contains(t, string(got), "nobody\nnested ran\n")
	assert.Regexp(t, `shellsup: sweep: left \S+/shellsup-\d+-\d+-\d+-\d+-[0-9a-f]{32} alone: made in another PID namespace`, string(got))
	assert.Contains(t, string(got), "A exit 0\nup\nalive\n", "run A beside the nested shellsup is never killed")
}
