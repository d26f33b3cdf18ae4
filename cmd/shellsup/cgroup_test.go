//go:build linux

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

const unified = "/sys/fs/cgroup/unified"

// cgroupTierHere says whether shellsup gets the cgroup tier by default on
// this test run.
func cgroupTierHere() bool { return proctest.CgroupByDefault() }

// defaultContainment is what start.containment says without options.
func defaultContainment() string { return proctest.Containment(false) }

func needCgroupTier(t *testing.T) {
	t.Helper()
	if !cgroupTierHere() {
		t.Skip("needs root and cgroup2 at " + unified)
	}
}

// leafOf is the cgroup2 directory of a running process.
func leafOf(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return filepath.Join(unified, p)
		}
	}
	t.Fatalf("no cgroup2 line in %q", b)
	return ""
}

// v1LeavesOf lists the v1 pids and memory cgroups of a process that are
// shellsup leaves.
func v1LeavesOf(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	require.NoError(t, err)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && (parts[1] == "pids" || parts[1] == "memory") && strings.Contains(parts[2], "/shellsup-") {
			out = append(out, filepath.Join("/sys/fs/cgroup", parts[1], parts[2]))
		}
	}
	return out
}

func TestCgroupTierByDefault(t *testing.T) {
	needCgroupTier(t)
	r := runShellsup(t, opts{command: "echo ready; sed -n 's/^0:://p' /proc/self/cgroup"})
	tot := requireTotals(t, r)
	require.NotNil(t, r.start)
	assert.Equal(t, proctest.Containment(false), r.start.Containment)
	assert.Equal(t, proctest.Containment(false), tot.Cleanup.Tier)
	lines := strings.Split(strings.TrimSpace(tot.Stdout), "\n")
	require.Len(t, lines, 2, tot.Stdout)
	leaf := filepath.Join(unified, lines[1])
	assert.Regexp(t, fmt.Sprintf(`^/shellsup-%d-[0-9]+-[0-9]+-[0-9]+-[0-9a-f]{32}$`, r.start.Pid), lines[1], "bash runs in the leaf named after its shellsup")
	assert.Equal(t, filepath.Join(unified, lines[1]), r.start.Cgroup, "start names the leaf")
	assert.NoDirExists(t, leaf, "the leaf is removed after the run")
	assert.Zero(t, tot.Cleanup.PidsLimitHit)
	assert.Zero(t, tot.Cleanup.OOMKills)
	assert.Empty(t, tot.Cleanup.Tampered)
	assert.Empty(t, tot.Cleanup.LeafLeft)
}

func TestSweepAfterShellsupKilled(t *testing.T) {
	needCgroupTier(t)
	for _, how := range []string{"sweep", "next run"} {
		t.Run(how, func(t *testing.T) {
			tok := reapertest.NewToken()
			// A parent of this test's own: every shellsup start sweeps its
			// parent, and other tests run shellsups side by side.
			parent := filepath.Join(unified, fmt.Sprintf("shellsup-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
			require.NoError(t, os.Mkdir(parent, 0o755))
			t.Cleanup(func() { _ = os.Remove(parent) })
			var leaf string
			var v1Leaves []string
			bash := 0
			r := runShellsup(t, opts{
				args:        []string{"--cgroup", parent, "--max-procs", "64", "--max-memory", "64M"},
				command:     "setsid sleep 60 & setsid sleep 60 & echo ready; wait",
				env:         []string{tok.Env()},
				noLeakCheck: true,
				onFrame: func(r *running, f protocol.Frame) {
					if s, ok := f.(*protocol.Start); ok {
						bash = s.ChildPid
					}
					if leaf == "" && strings.Contains(r.stdoutSoFar(), "ready") {
						leaf = leafOf(t, bash)
						v1Leaves = v1LeavesOf(t, bash)
						r.signal(syscall.SIGKILL)
					}
				},
			})
			require.Equal(t, -1, r.exit, "shellsup was SIGKILLed")
			require.Nil(t, r.totals)
			t.Cleanup(func() { reapertest.Kill(tok); reapertest.ReapOrphans() })
			require.NotEmpty(t, leaf)
			require.DirExists(t, leaf, "a SIGKILLed shellsup leaves its leaf")
			require.NotEmpty(t, reapertest.Find(tok), "and the tree in it")
			if how == "sweep" {
				out, err := exec.Command(shellsupBin, "sweep", "--cgroup", parent).CombinedOutput()
				require.NoError(t, err, "%s", out)
				// The v2 leaf first (3 processes killed, 4 with the init of a
				// --pidns run that has not finished dying, or 0 when a shellsup
				// started meanwhile by a parallel test swept the v1 limit
				// leaves, which hold the same processes, first); then the v1
				// leaves, unless that shellsup removed them.
				assert.Regexp(t, "^shellsup: sweep: killed [034] processes in "+regexp.QuoteMeta(leaf)+" and removed it\n", string(out))
			} else {
				next := runShellsup(t, opts{args: []string{"--cgroup", parent}, command: "true", noLeakCheck: true}) // the killed run's zombies are this test's to reap
				requireTotals(t, next)
			}
			assert.NoDirExists(t, leaf)
			require.Len(t, v1Leaves, 2, "bash was in a v1 pids and a v1 memory leaf")
			for _, d := range v1Leaves {
				assert.NoDirExists(t, d, "the v1 limit leaves are swept too")
			}
			deadline := time.Now().Add(10 * time.Second)
			for len(reapertest.Find(tok)) > 0 && time.Now().Before(deadline) {
				reapertest.ReapOrphans() // bash and the sleepers were reparented to this test
				time.Sleep(5 * time.Millisecond)
			}
			assert.Empty(t, reapertest.Find(tok), "nothing of the killed run is left")
		})
	}
}

// limitCheck is a shell prelude that exits 99 unless the leaf's limit
// file (v2, else v1 CONTROLLER hierarchy) reads WANT: the dangerous part
// of a test runs only under a limit read back from the kernel.
func limitCheck(v2file, controller, v1file, want string) string {
	return fmt.Sprintf(`v2=%[1]s$(sed -n 's/^0:://p' /proc/self/cgroup)/%[2]s
v1=/sys/fs/cgroup/%[3]s$(sed -n 's/^[0-9]*:%[3]s://p' /proc/self/cgroup)/%[4]s
if [ -r "$v2" ]; then m=$(cat "$v2"); else m=$(cat "$v1"); fi
[ "$m" = %[5]s ] || { echo "limit is $m, not %[5]s"; exit 99; }
`, unified, v2file, controller, v1file, want)
}

func TestForkBombHeldByMaxProcs(t *testing.T) {
	needCgroupTier(t)
	var mu sync.Mutex
	peak, hostBase, hostPeak := 0, countProcs(0), 0
	stop := make(chan struct{})
	sampled := make(chan struct{})
	var sid int
	r := runShellsup(t, opts{
		args:    []string{"--max-procs", "64", "--timeout", "5", "--grace", "0"},
		command: limitCheck("pids.max", "pids", "pids.max", "64") + "sleep 30 & s=$!; echo ready; :(){ :|:& };:; wait $s",
		onFrame: func(r *running, f protocol.Frame) {
			if s, ok := f.(*protocol.Start); ok {
				sid = s.ChildPid // bash leads its own session; the bomb stays in it
				go func() {
					defer close(sampled)
					for {
						n, h := countProcs(sid), countProcs(0)
						mu.Lock()
						peak, hostPeak = max(peak, n), max(hostPeak, h)
						mu.Unlock()
						select {
						case <-stop:
							return
						case <-time.After(2 * time.Millisecond):
						}
					}
				}()
			}
		},
	})
	close(stop)
	<-sampled
	tot := requireTotals(t, r)
	require.NotEqual(t, 99, r.exit, "the limit was not in force: %s", tot.Stdout)
	assert.True(t, tot.TimedOut)
	assert.Positive(t, tot.Cleanup.PidsLimitHit, "pids.events max counts refused forks")
	mu.Lock()
	defer mu.Unlock()
	assert.LessOrEqual(t, peak, 64, "the bomb's session never held more than pids.max processes")
	assert.Positive(t, peak)
	t.Logf("bomb peak %d processes; host %d → %d (other work shares the host); pidsLimitHit %d", peak, hostBase, hostPeak, tot.Cleanup.PidsLimitHit)
}

// countProcs counts the processes of session sid, or all processes when
// sid is 0.
func countProcs(sid int) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if sid == 0 {
			n++
			continue
		}
		if st, err := proctest.Stat(pid); err == nil && st.Session == sid && pid > 0 {
			n++
		}
	}
	return n
}

func TestMemoryHogOOMKilled(t *testing.T) {
	needCgroupTier(t)
	want := strconv.Itoa(64 << 20)
	r := runShellsup(t, opts{
		args:    []string{"--max-memory", "64M", "--timeout", "60"},
		command: limitCheck("memory.max", "memory", "memory.limit_in_bytes", want) + `/usr/bin/python3 -c "b = b'x' * (300 << 20)"; echo "hog exit $?"`,
	})
	tot := requireTotals(t, r)
	require.NotEqual(t, 99, r.exit, "the limit was not in force: %s", tot.Stdout)
	assert.Contains(t, tot.Stdout, "hog exit 137", "SIGKILLed by the OOM killer")
	assert.GreaterOrEqual(t, tot.Cleanup.OOMKills, int64(1))
	assert.Equal(t, 0, *tot.ExitCode, "bash, at oom_score_adj 500 like the hog, was not the victim")
}

func TestOOMScoreRaised(t *testing.T) {
	r := runShellsup(t, opts{command: "cat /proc/self/oom_score_adj"})
	tot := requireTotals(t, r)
	assert.Equal(t, "500\n", tot.Stdout)
}

func TestLimitRefusedWithoutController(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpu io\n"), 0o644))
	for _, args := range [][]string{{"--max-procs", "64"}, {"--max-memory", "64M"}} {
		t.Run(args[0], func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "spawned")
			r := runShellsup(t, opts{bin: seamsBin, args: args, env: []string{"SHELLSUP_TEST_CGROUP_ROOT=" + root}, command: "touch " + marker})
			controller := map[string]string{"--max-procs": "pids", "--max-memory": "memory"}[args[0]]
			assertRefused(t, r, protocol.CategoryContainmentUnavailable, "the "+controller+" controller is not available", marker)
			assert.Contains(t, r.errf.Message, "no cgroup v1 "+controller+" hierarchy is mounted")
		})
	}
	t.Run("require cgroup", func(t *testing.T) {
		marker := filepath.Join(t.TempDir(), "spawned")
		r := runShellsup(t, opts{bin: seamsBin, args: []string{"--require", "cgroup"}, env: []string{"SHELLSUP_TEST_CGROUP_ROOT=" + root}, command: "touch " + marker})
		assertRefused(t, r, protocol.CategoryContainmentUnavailable, "cgroup.kill", marker)
	})
	t.Run("require pidns", func(t *testing.T) {
		if proctest.Tier() == "pidns" {
			t.Skip("this test run forces the pidns tier on every run")
		}
		marker := filepath.Join(t.TempDir(), "spawned")
		r := runShellsup(t, opts{args: []string{"--require", "pidns"}, command: "touch " + marker})
		assertRefused(t, r, protocol.CategoryContainmentUnavailable, "--require pidns: the pidns tier is not in force", marker)
	})
	t.Run("no limit: silent fallback", func(t *testing.T) {
		r := runShellsup(t, opts{bin: seamsBin, env: []string{"SHELLSUP_TEST_CGROUP_ROOT=" + root}, command: "true"})
		requireTotals(t, r)
		assert.Equal(t, "subreaper", r.start.Containment)
	})
}

func TestCgroupOptionsValidated(t *testing.T) {
	if proctest.Tier() == "subreaper" {
		t.Skip("this test run adds --no-cgroup to every run, which these options refuse")
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--max-procs", "1"}, `max-procs must be a whole number of processes, at least 2 and at most 4194304 (got "1")`},
		{[]string{"--max-procs", "lots"}, `(got "lots")`},
		{[]string{"--max-memory", "64Q"}, `max-memory: "64Q" is not a byte count`},
		{[]string{"--max-memory", "1K"}, `max-memory must be at least 4194304 bytes`},
		{[]string{"--require", "vm"}, `require must be "cgroup" or "pidns" (got "vm")`},
		{[]string{"--cgroup", "relative"}, `cgroup must be the absolute path`},
		{[]string{"--cgroup", "/no/such/cgroup"}, `cgroup "/no/such/cgroup" is not an existing directory`},
	} {
		marker := filepath.Join(t.TempDir(), "spawned")
		r := runShellsup(t, opts{args: c.args, command: "touch " + marker})
		assertRefused(t, r, protocol.CategoryValidation, c.msg, marker)
	}
}

// unprivileged copies shellsup where user nobody can run it and returns
// it with a directory nobody may write.
func unprivileged(t *testing.T) (bin, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to become nobody")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv")
	}
	dir, err := os.MkdirTemp("", "shellsup-nobody-") // t.TempDir's parent is private to root
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o777))
	bin = filepath.Join(dir, "shellsup")
	var b []byte
	b, err = os.ReadFile(proctest.Unwrapped(shellsupBin))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, b, 0o755))
	return bin, dir
}

// asNobody runs shellsup in human mode as user nobody.
func asNobody(t *testing.T, bin, dir string, args ...string) (string, int) {
	t.Helper()
	argv := append([]string{"--reuid=nobody", "--regid=nogroup", "--clear-groups", bin}, args...)
	cmd := exec.Command("setpriv", argv...)
	cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		require.True(t, ok, "%v", err)
		code = ee.ExitCode()
	}
	return string(out), code
}

func TestUnprivilegedFallsBackOrRefuses(t *testing.T) {
	bin, dir := unprivileged(t)
	out, code := asNobody(t, bin, dir, "--", "id -un; sed -n 's/^0:://p' /proc/self/cgroup")
	require.Equal(t, 0, code, out)
	sc := bufio.NewScanner(strings.NewReader(out))
	require.True(t, sc.Scan())
	assert.Equal(t, "nobody", sc.Text())
	require.True(t, sc.Scan())
	assert.NotContains(t, sc.Text(), "shellsup-", "no leaf: nobody cannot write the cgroup; the run falls back to the subreaper tier")

	marker := filepath.Join(dir, "spawned")
	out, code = asNobody(t, bin, dir, "--require", "cgroup", "--", "touch "+marker)
	assert.Equal(t, 125, code, out)
	assert.Contains(t, out, "creating a cgroup v2 leaf")
	assert.NoFileExists(t, marker, "refused: nothing spawned")

	out, code = asNobody(t, bin, dir, "--max-procs", "64", "--", "touch "+marker)
	assert.Equal(t, 125, code, out)
	assert.Contains(t, out, "--max-procs 64")
	assert.NoFileExists(t, marker, "refused: nothing spawned")
}

// TestDelegatedCgroupUnprivileged: a cgroup delegated to nobody (chowned,
// as systemd's Delegate=yes does) with shellsup started inside it gives an
// unprivileged shellsup the cgroup tier by default.
func TestDelegatedCgroupUnprivileged(t *testing.T) {
	needCgroupTier(t)
	bin, dir := unprivileged(t)
	deleg := filepath.Join(unified, fmt.Sprintf("shellsup-test-deleg-%d", os.Getpid()))
	require.NoError(t, os.Mkdir(deleg, 0o755))
	t.Cleanup(func() { _ = os.Remove(deleg) })
	nobody := exec.Command("id", "-u", "nobody")
	out, err := nobody.Output()
	require.NoError(t, err)
	uid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	require.NoError(t, err)
	for _, f := range []string{"", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control"} {
		require.NoError(t, os.Chown(filepath.Join(deleg, f), uid, -1))
	}
	// Move into the delegated cgroup as root, then become nobody.
	script := fmt.Sprintf(`echo $$ > %s/cgroup.procs && exec setpriv --reuid=nobody --regid=nogroup --clear-groups %s --require cgroup -- 'id -un; sed -n "s/^0:://p" /proc/self/cgroup'`, deleg, bin)
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
	cmd.Dir = dir
	got, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", got)
	lines := strings.Split(string(got), "\n")
	require.GreaterOrEqual(t, len(lines), 2, "%s", got)
	assert.Equal(t, "nobody", lines[0])
	rel := strings.TrimPrefix(deleg, unified)
	assert.Regexp(t, "^"+rel+"/shellsup-[0-9]+-[0-9]+-[0-9]+-[0-9]+-[0-9a-f]{32}$", lines[1], "bash ran in a leaf of the delegated cgroup")
	entries, err := os.ReadDir(deleg)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, e.IsDir(), "leaf %s left behind", e.Name())
	}
}
