package shellsup

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/reaper/reapertest"
)

// TestHarnessKilled: a Go harness (the test binary as a helper) runs a
// command with a setsid child and a background job through Run, and is
// SIGKILLed in the middle. shellsup learns it at once (EOF on its control
// pipe, and the parent-death signal) and removes the whole tree within a
// couple of seconds.
func TestHarnessKilled(t *testing.T) {
	tok := reapertest.NewToken()
	t.Cleanup(func() { reapertest.Check(t, tok) })
	harness, lines := startHelper(t, "harness", tok)
	awaitLine(t, lines, "ready (pid: ", 10*time.Second)
	require.NotEmpty(t, reapertest.Find(tok, harness.Process.Pid), "shellsup, bash and the sleeps are running")

	require.NoError(t, harness.Process.Kill())
	_ = harness.Wait() // "signal: killed"
	took := awaitNoLeak(t, tok, 3*time.Second)
	t.Logf("the tree was gone %v after the harness died", took)
}

// TestHarnessKilledStdinHeld: the same, but another process holds Run's end
// of shellsup's control channel, so its stdin never reaches EOF. The
// parent-death signal alone must bring the news.
func TestHarnessKilledStdinHeld(t *testing.T) {
	tok := reapertest.NewToken()
	t.Cleanup(func() { reapertest.Check(t, tok) })
	harness, lines := startHelper(t, "harness-holding-stdin", tok)
	line := awaitLine(t, lines, "holder (pid: ", 10*time.Second)
	var holder int
	_, err := fmt.Sscanf(line, "holder (pid: %d)", &holder)
	require.NoError(t, err)
	t.Cleanup(func() { killHolder(holder) })
	awaitLine(t, lines, "ready (pid: ", 10*time.Second)

	require.NoError(t, harness.Process.Kill())
	_ = harness.Wait() // "signal: killed"
	took := awaitNoLeak(t, tok, 3*time.Second, holder)
	t.Logf("the tree was gone %v after the harness died", took)
	_, err = os.Stat(fmt.Sprintf("/proc/%d", holder))
	require.NoError(t, err, "the holder (and so the open control channel) outlived shellsup's tree")
}

// killHolder kills and reaps the holder, by then an orphan of the test.
func killHolder(pid int) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return // gone already
	}
	defer unix.Close(fd)
	_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) // it may have just exited
	var ws unix.WaitStatus
	_, _ = unix.Wait4(pid, &ws, 0, nil) // the test's own orphan: only this pid
}
