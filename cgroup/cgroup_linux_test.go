package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
)

// realHost is this machine's cgroups; tests that need a writable cgroup2
// skip elsewhere.
func realHost(t *testing.T) Host {
	t.Helper()
	h, err := Discover()
	require.NoError(t, err)
	if os.Geteuid() != 0 || h.Unified == "" {
		t.Skip("needs root and a cgroup2 mount")
	}
	return h
}

// startIn starts bash in the leaf (CLONE_INTO_CGROUP) running script; the
// caller waits for it.
func startIn(t *testing.T, l *Leaf, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/bash", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: l.CgroupFD(), Setsid: true}
	require.NoError(t, cmd.Start())
	return cmd
}

func TestDiscoverThisHost(t *testing.T) {
	h := realHost(t)
	own, err := os.ReadFile("/proc/self/cgroup")
	require.NoError(t, err)
	assert.Contains(t, string(own), "0::")
	st, err := os.Stat(filepath.Join(h.Self, "cgroup.procs"))
	require.NoError(t, err, "Self is a cgroup2 directory")
	assert.False(t, st.IsDir())
}

func TestDiscoverBindMountedRoot(t *testing.T) {
	mi := "41 31 0:38 /outer /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n" +
		"39 31 0:36 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n" +
		"35 31 0:32 / /mnt/mem\\040x rw - cgroup cgroup rw,memory,memsw\n"
	self := "8:pids:/a\n4:memory:/b/c\n0::/outer/svc\n"
	h := discoverFrom(Host{V1: map[string]string{}}, []byte(mi), []byte(self))
	assert.Equal(t, "/sys/fs/cgroup", h.Unified)
	assert.Equal(t, "/sys/fs/cgroup/svc", h.Self)
	assert.Equal(t, map[string]string{"pids": "/sys/fs/cgroup/pids/a", "memory": "/mnt/mem x/b/c"}, h.V1)
}

// me is this test process as a leaf's owner.
func me(t *testing.T) owner {
	t.Helper()
	o, err := self("/proc")
	require.NoError(t, err)
	require.True(t, procShowsSelf("/proc", o.pid), "the test's /proc shows its own PID namespace")
	return o
}

func TestLeafNamedAfterItsShellsup(t *testing.T) {
	o := me(t)
	name := o.name()
	parsed, ok := parseOwner(name)
	require.True(t, ok, name)
	assert.Equal(t, o, parsed)
	assert.Equal(t, os.Getpid(), parsed.pid)
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat("/proc/self/ns/pid", &st))
	assert.Equal(t, st.Ino, parsed.ns, "the leaf records the PID namespace")
	if err := syscall.Stat("/proc/self/ns/time", &st); err == nil {
		assert.Equal(t, st.Ino, parsed.timens, "the leaf records the time namespace")
	} else {
		assert.Zero(t, parsed.timens, "no time namespaces on this kernel")
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	require.NoError(t, err)
	assert.Equal(t, strings.ReplaceAll(strings.TrimSpace(string(boot)), "-", ""), parsed.boot, "and the boot")
	assert.False(t, stale("/proc", name), "our own leaf is alive")
	reused := o
	reused.start = 1
	assert.True(t, stale("/proc", reused.name()), "same pid, other start time: reused")
	assert.False(t, stale("/proc", "not-a-leaf"))
	assert.False(t, stale("/proc", fmt.Sprintf("shellsup-%d-1", os.Getpid())), "an old-style name says no namespace: never judged")
	assert.False(t, stale("/proc", fmt.Sprintf("shellsup-%d-1-%d-%s", os.Getpid(), o.ns, o.boot)),
		"a name without the time namespace (the previous form) cannot be judged: never touched")
}

// TestParseOwnerTakesOnlyItsOwnNames: only shellsup-<pid>-<start>-<pidns>-
// <timens>-<32 lowercase hex> is a leaf's name; anything else (the older
// form without the time namespace included) is never judged.
func TestParseOwnerTakesOnlyItsOwnNames(t *testing.T) {
	boot := strings.Repeat("0123456789abcdef", 2)
	o, ok := parseOwner("shellsup-12-345-4026531836-4026531834-" + boot)
	require.True(t, ok)
	assert.Equal(t, owner{pid: 12, start: 345, ns: 4026531836, timens: 4026531834, boot: boot}, o)
	o, ok = parseOwner("shellsup-12-345-4026531836-0-" + boot)
	require.True(t, ok, "a kernel without time namespaces names 0")
	assert.Zero(t, o.timens)
	for _, name := range []string{
		"shellsup-12-345", "shellsup-12-345-4026531836", "shellsup-12-345-4026531836-" + boot,
		"shellsup-12-345-1-2-" + boot + "-1",
		"shellsup-+12-345-1-2-" + boot, "shellsup--345-1-2-" + boot, "shellsup-12-3x5-1-2-" + boot,
		"shellsup-12-345-1-x-" + boot, "shellsup-12-345-1--" + boot,
		"shellsup-12-345-1-2-" + strings.ToUpper(boot), "shellsup-12-345-1-2-" + boot[1:],
		"shellsup-12-345-1-2-" + boot + "0", "shellsup-12-345-1-2-" + boot + "\n", "xshellsup-12-345-1-2-" + boot,
		"shellsup-99999999999999999999-345-1-2-" + boot, "shellsup-12-345-1-99999999999999999999-" + boot, "", "shellsup-",
	} {
		_, ok := parseOwner(name)
		assert.False(t, ok, "%q", name)
	}
}

func TestLeavesOfOtherNamespacesAreNotJudged(t *testing.T) {
	o := me(t)
	gone := o
	gone.pid, gone.start = 1<<22+1, 1 // above pid_max: no such process here
	j := judge{proc: "/proc", me: o, seesOwn: true}
	assert.Equal(t, dead, j.verdict(gone.name()), "a leaf of this namespace whose pid is gone is stale")
	other := gone
	other.ns++
	assert.Equal(t, foreign, j.verdict(other.name()), "another PID namespace: its pid means nothing here")
	assert.Contains(t, j.whyForeign(other.name()), "another PID namespace")
	timens := gone
	timens.timens++
	assert.Equal(t, foreign, j.verdict(timens.name()), "another time namespace: its start time reads shifted here")
	assert.Contains(t, j.whyForeign(timens.name()), "another time namespace")
	boot := gone
	boot.boot = strings.Repeat("0", 32)
	assert.Equal(t, foreign, j.verdict(boot.name()), "another boot")
	blind := judge{proc: "/proc", me: o, seesOwn: false}
	assert.Equal(t, foreign, blind.verdict(gone.name()), "a /proc not of our own namespace judges nothing")
	assert.Contains(t, blind.whyForeign(gone.name()), "does not show")
}

func TestProcShowsSelf(t *testing.T) {
	assert.True(t, procShowsSelf("/proc", os.Getpid()))
	assert.False(t, procShowsSelf("/proc", os.Getpid()+1<<22), "/proc/self is another pid: another namespace's procfs")
}

func TestKillFreezesKillsAndEmpties(t *testing.T) {
	h := realHost(t)
	l, err := Open(h, Options{})
	require.NoError(t, err)
	assert.Equal(t, TierName, l.Name())
	dir := l.Dir()
	// Three setsid sleepers that ignore SIGTERM, then bash waits.
	cmd := startIn(t, l, `trap "" TERM; for i in 1 2 3; do setsid sleep 60 & done; wait`)
	proctest.Poll(t, 30*time.Second, "four processes in the leaf", func() bool { return len(procsBelow(dir)) == 4 })
	pop, err := l.Populated()
	require.NoError(t, err)
	assert.True(t, pop)
	require.NoError(t, l.Kill())
	pop, err = l.Populated()
	require.NoError(t, err)
	assert.False(t, pop, "populated 0 after Kill")
	_ = cmd.Wait() // killed: the error is the signal
	assert.Equal(t, syscall.SIGKILL, cmd.ProcessState.Sys().(syscall.WaitStatus).Signal())
	require.NoError(t, l.Close())
	assert.NoDirExists(t, dir)
	require.NoError(t, l.Close(), "idempotent")
}

// privateParent is a cgroup of this test's own, named so that no shellsup
// sweeps inside it but the ones the test points at it (every shellsup
// start sweeps its own parent, and tests run side by side).
func privateParent(t *testing.T, h Host) string {
	t.Helper()
	dir := filepath.Join(h.Self, fmt.Sprintf("shellsup-test-%d-%s", os.Getpid(), t.Name()))
	require.NoError(t, os.Mkdir(dir, 0o755))
	t.Cleanup(func() { _ = removeLeaf(dir, time.Second) })
	return dir
}

func TestSweepKillsStaleLeavesOnly(t *testing.T) {
	h := realHost(t)
	parent := privateParent(t, h)
	// A stale leaf: our pid with another start time, as after pid reuse.
	o := me(t)
	o.start = 1
	staleDir := filepath.Join(parent, o.name())
	require.NoError(t, os.Mkdir(staleDir, 0o755))
	fd, err := syscall.Open(staleDir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	require.NoError(t, err)
	cmd := exec.Command("/bin/bash", "-c", "setsid sleep 60 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	require.NoError(t, cmd.Start())
	syscall.Close(fd)
	proctest.Poll(t, 30*time.Second, "two processes in the stale leaf", func() bool { return len(procsBelow(staleDir)) == 2 })
	live, err := Open(h, Options{Parent: parent}) // Open sweeps its parent first
	require.NoError(t, err)
	defer live.Close()
	_ = cmd.Wait() // killed
	assert.NoDirExists(t, staleDir, "Open swept the stale leaf")

	// And Sweep on its own, with the live leaf beside a fresh stale one.
	require.NoError(t, os.Mkdir(staleDir, 0o755))
	swept, err := Sweep(h, parent)
	require.NoError(t, err)
	require.Len(t, swept, 1)
	assert.Equal(t, Swept{Path: staleDir, Killed: 0}, swept[0])
	assert.DirExists(t, live.Dir(), "a live shellsup's leaf is never touched")

	// Deferred (shellsup's start): Open leaves the stale leaf, SweepStale
	// removes it, once. (A second leaf of this process needs the first gone:
	// the name is the process's.)
	require.NoError(t, live.Close())
	require.NoError(t, os.Mkdir(staleDir, 0o755))
	later, err := Open(h, Options{Parent: parent, DeferSweep: true})
	require.NoError(t, err)
	defer later.Close()
	assert.DirExists(t, staleDir, "a deferred sweep waits for SweepStale")
	later.SweepStale()
	assert.NoDirExists(t, staleDir, "SweepStale swept the stale leaf")
	assert.DirExists(t, later.Dir(), "and left the live leaf")
	require.NoError(t, os.Mkdir(staleDir, 0o755))
	later.SweepStale()
	assert.DirExists(t, staleDir, "the second call does nothing")
	_, err = Sweep(h, parent)
	require.NoError(t, err)
}

func TestLimitsOnThisHost(t *testing.T) {
	h := realHost(t)
	l, err := Open(h, Options{MaxProcs: 64, MaxMemory: 64 << 20})
	if err != nil {
		t.Skipf("limits unavailable here: %v", err)
	}
	defer l.Close()
	read := func(c, f string) string {
		dir := filepath.Join(l.Dir(), f)
		if _, err := os.Stat(dir); err != nil {
			dir = filepath.Join(h.V1[c], l.name, f)
		}
		b, err := os.ReadFile(dir)
		require.NoError(t, err)
		return strings.TrimSpace(string(b))
	}
	assert.Equal(t, "64", read("pids", "pids.max"))
	mem := read("memory", "memory.limit_in_bytes")
	assert.Equal(t, fmt.Sprint(64<<20), mem)

	// bash is born in the v1 leaves too: PlaceThread around the fork.
	var out strings.Builder
	cmd := exec.Command("/bin/cat", "/proc/self/cgroup")
	cmd.Stdout = &out
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: l.CgroupFD()}
	func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		restore, err := l.PlaceThread()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		require.NoError(t, restore(), "the thread goes back to shellsup's own cgroups")
	}()
	require.NoError(t, cmd.Wait())
	assert.Contains(t, out.String(), ":pids:"+strings.TrimPrefix(filepath.Join(h.V1["pids"], l.name), "/sys/fs/cgroup/pids")+"\n")
	assert.Contains(t, out.String(), "0::"+strings.TrimPrefix(l.Dir(), h.Unified)+"\n")
	self, err := os.ReadFile("/proc/thread-self/cgroup")
	require.NoError(t, err)
	assert.NotContains(t, string(self), l.name, "shellsup's threads are not in the leaves")
}

// TestHiddenProcessesAreNotGone is the fourth review's finding 4: under a
// procfs mounted hidepid=2 another user's live shellsup reads as gone, and
// an unprivileged sweep removed a root --user run's TMPDIR and killed its
// command. A procfs that does not show its pid 1 judges no pid gone. (A
// directory without "1" stands for it: root sees through a real hidepid.)
func TestHiddenProcessesAreNotGone(t *testing.T) {
	o := me(t)
	gone := o
	gone.pid, gone.start = 1<<22+1, 1
	assert.True(t, procShowsAll("/proc"))
	hidden := t.TempDir()
	assert.False(t, procShowsAll(hidden))
	j := judge{proc: hidden, me: o, seesOwn: true}
	assert.Equal(t, live, j.verdict(gone.name()), "a pid hidden from the sweeper was judged gone")
}
