//go:build linux

package reaper

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/reaper/reapertest"
)

// tree starts bash -c script as a child of the test binary (a subreaper)
// with a leak token, and a Waiter for it, as shellsup does.
func tree(t *testing.T, script string) (*Waiter, reapertest.Token) {
	t.Helper()
	tok := reapertest.NewToken()
	pid, err := syscall.ForkExec("/bin/bash", []string{"bash", "-c", script}, &syscall.ProcAttr{
		Env:   []string{tok.Env(), "PATH=" + os.Getenv("PATH")},
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	require.NoError(t, err)
	return StartWaiter(pid), tok
}

func subreaper(t *testing.T) *Containment {
	return &Containment{procRoot: "/proc", self: os.Getpid(), tiers: []Tier{subreaperTier{}}}
}

// waitFile polls until path exists.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s never appeared", path)
}

func TestCleanupAfterLeaderExit(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "ready")
	w, tok := tree(t, "setsid sleep 300 & (sleep 300; true) & nohup sleep 300 >/dev/null 2>&1 & touch "+ready)
	waitFile(t, ready)
	<-w.LeaderExited()
	assert.True(t, w.LeaderStatus().Exited())
	rep := subreaper(t).Cleanup(w, Deadlines{Grace: time.Second, Kill: time.Second})
	assert.True(t, rep.Clean(), "stragglers: %v", rep.Stragglers)
	assert.GreaterOrEqual(t, rep.Signalled, 3)
	assert.Zero(t, rep.Killed, "all of them exit on SIGTERM")
	assert.Equal(t, "subreaper", rep.Tier)
	<-w.Empty()
	reapertest.Check(t, tok)
}

func TestCleanupKillsTermIgnorersAtGrace(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "ready")
	w, tok := tree(t, "trap '' TERM; sleep 300 & sleep 300 & kill -STOP $!; touch "+ready+"; wait")
	waitFile(t, ready)
	start := time.Now()
	rep := subreaper(t).Cleanup(w, Deadlines{Grace: 300 * time.Millisecond, Kill: 2 * time.Second})
	took := time.Since(start)
	assert.True(t, rep.Clean(), "stragglers: %v", rep.Stragglers)
	assert.GreaterOrEqual(t, took, 300*time.Millisecond)
	assert.GreaterOrEqual(t, rep.Killed, 3, "bash and both sleeps ignore TERM (the stopped one too: it inherited the ignore)")
	assert.Equal(t, unix.SIGKILL, w.LeaderStatus().Signal())
	reapertest.Check(t, tok)
}

func TestCleanupStoppedProcessActsOnTerm(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "ready")
	w, tok := tree(t, "sleep 300 & kill -STOP $!; touch "+ready+"; wait")
	waitFile(t, ready)
	rep := subreaper(t).Cleanup(w, Deadlines{Grace: 10 * time.Second, Kill: time.Second})
	assert.True(t, rep.Clean())
	assert.Zero(t, rep.Killed, "SIGCONT after SIGTERM lets the stopped sleep die")
	assert.Less(t, rep.Duration, 5*time.Second)
	reapertest.Check(t, tok)
}

func TestCleanupNothingLeft(t *testing.T) {
	w, _ := tree(t, "exit 3")
	<-w.LeaderExited()
	assert.Equal(t, 3, w.LeaderStatus().ExitStatus())
	rep := subreaper(t).Cleanup(w, Deadlines{Grace: time.Second, Kill: time.Second})
	assert.True(t, rep.Clean())
	assert.Zero(t, rep.Rounds, "no scan when the tree is already gone")
	assert.Equal(t, 1, w.Count())
}

func TestDisabledCleanupLeaks(t *testing.T) {
	// The negative control of the package: with containment disabled the
	// leak check sees what is left, and then removes it.
	ready := filepath.Join(t.TempDir(), "ready")
	w, tok := tree(t, "sleep 300 & touch "+ready)
	waitFile(t, ready)
	<-w.LeaderExited()
	rep := Disabled().Cleanup(w, Deadlines{Grace: time.Second, Kill: time.Second})
	assert.True(t, rep.Clean(), "a disabled cleanup reports nothing")
	assert.Len(t, reapertest.Find(tok), 1)
	reapertest.Kill(tok)
	<-w.Empty()
}

// TestOpenVerifiedRefusesReusedPid: a pid whose /proc entry now shows
// another start time (what a reused pid looks like) is never signalled.
func TestOpenVerifiedRefusesReusedPid(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "ready")
	w, tok := tree(t, "touch "+ready+"; exec sleep 300")
	waitFile(t, ready)
	pid := w.leader
	real := procDir{root: "/proc"}
	p, err := real.stat(pid)
	require.NoError(t, err)

	fd, err := openVerified(&real, p)
	require.NoError(t, err, "the same process verifies")
	unix.Close(fd)

	// A fake /proc where pid's start time differs: as if the process died
	// and another took its pid between the scan and pidfd_open.
	moved := p
	moved.start++
	fake := procDir{root: fakeProc(t, moved)}
	_, err = openVerified(&fake, p)
	assert.ErrorIs(t, err, errReused)

	stranger := p
	stranger.ppid = 1
	fake = procDir{root: fakeProc(t, stranger)}
	_, err = openVerified(&fake, p)
	assert.ErrorIs(t, err, errReused, "same start time but another parent")

	rep := subreaper(t).Cleanup(w, Deadlines{Grace: time.Second, Kill: time.Second})
	assert.True(t, rep.Clean())
	reapertest.Check(t, tok)
	_, err = os.Stat("/proc/" + strconv.Itoa(pid))
	assert.True(t, os.IsNotExist(err))
}

func TestSetup(t *testing.T) {
	c, err := Setup("/proc")
	require.NoError(t, err)
	assert.Equal(t, "subreaper", c.Name())
	_, err = Setup(t.TempDir())
	var ue *UnavailableError
	assert.ErrorAs(t, err, &ue)
}

// pidKiller is a tier whose Kill SIGKILLs the pids written in a file and
// lists them, as the cgroup tier's cgroup.kill does for its leaf.
type pidKiller struct {
	subreaperTier
	t      *testing.T
	pidsAt string
	pids   []int
	// reaped: Kill returns only once the pids are gone from /proc (their
	// parent reaped them), so the walk after it never sees them.
	reaped bool
}

func (k *pidKiller) Kill() error {
	b, err := os.ReadFile(k.pidsAt)
	require.NoError(k.t, err)
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		require.NoError(k.t, err)
		require.NoError(k.t, unix.Kill(pid, unix.SIGKILL))
		k.pids = append(k.pids, pid)
		for k.reaped && exists(pid) {
			time.Sleep(time.Millisecond)
		}
	}
	return nil
}

func (k *pidKiller) KilledPIDs() []int { return k.pids }

func exists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

// A process a tier killed is counted once, also when the walk after the
// tier's Kill finds it as a zombie and sends it SIGKILL again: B's parent A
// (an exec'd sleep) never reaps it.
func TestCleanupCountsTierKillsOnce(t *testing.T) {
	dir := t.TempDir()
	ready, pids := filepath.Join(dir, "ready"), filepath.Join(dir, "pids")
	w, tok := tree(t, "trap '' TERM; (sleep 300 & echo $! > "+pids+"; exec sleep 300) & until [ -s "+pids+" ]; do sleep 0.01; done; touch "+ready+"; wait")
	waitFile(t, ready)
	c := subreaper(t)
	k := &pidKiller{t: t, pidsAt: pids}
	c.AddTier(k)
	rep := c.Cleanup(w, Deadlines{Grace: 200 * time.Millisecond, Kill: 2 * time.Second})
	assert.True(t, rep.Clean(), "stragglers: %v", rep.Stragglers)
	require.Len(t, k.pids, 1)
	assert.Equal(t, 3, rep.Killed, "bash and A by the walk, B by the tier (the walk finds it a zombie): each once")
	assert.Equal(t, 3, rep.Signalled)
	reapertest.Check(t, tok)
}

// A process a tier killed and its parent reaped before the walk looked is
// still counted.
func TestCleanupCountsTierKillsTheWalkNeverSees(t *testing.T) {
	dir := t.TempDir()
	ready, pids := filepath.Join(dir, "ready"), filepath.Join(dir, "pids")
	w, tok := tree(t, "trap '' TERM; sleep 300 & echo $! > "+pids+"; touch "+ready+"; wait; exec sleep 300")
	waitFile(t, ready)
	c := subreaper(t)
	k := &pidKiller{t: t, pidsAt: pids, reaped: true}
	c.AddTier(k)
	rep := c.Cleanup(w, Deadlines{Grace: 200 * time.Millisecond, Kill: 2 * time.Second})
	assert.True(t, rep.Clean(), "stragglers: %v", rep.Stragglers)
	assert.Equal(t, 2, rep.Killed, "the sleep by the tier, bash (exec'd into a sleep) by the walk")
	assert.Equal(t, 2, rep.Signalled)
	reapertest.Check(t, tok)
}
