//go:build linux

package shellsup

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// TestStoppedShellsupStillCleansUp: the command SIGSTOPs shellsup, so it
// stops reporting. When the watchdog fires, Run resumes it (SIGCONT) and
// asks it to cancel (SIGTERM) instead of SIGKILLing it, which would leave
// its tree running: shellsup cleans up, and Run returns a protocol error
// that says what happened. Nothing is left: no shellsup, no descendant.
func TestStoppedShellsupStillCleansUp(t *testing.T) {
	shortSlack(t, time.Second)
	req := newRequest(t, "setsid sleep 300 & sleep 300 & kill -STOP $PPID; sleep 300")
	req.Timeout = time.Second
	req.Grace = new(time.Duration(0))
	res, err := Run(context.Background(), req)
	e := requireCategory(t, err, CategoryProtocol)
	assert.Zero(t, res)
	assert.Contains(t, e.Message, "it was stopped")
	assert.Contains(t, e.Message, "sent it SIGCONT and SIGTERM")
	assert.Contains(t, e.Message, "it then cleaned up and reported")
	assert.NotContains(t, e.Message, "SIGKILL")
	requireGone(t, e.Message)
}

// TestStopperThatKeepsStoppingShellsup: an accomplice stops shellsup again
// and again; Run keeps resuming it until it has cleaned up (the stopper is
// part of the tree, so the cleanup kills it).
func TestStopperThatKeepsStoppingShellsup(t *testing.T) {
	shortSlack(t, time.Second)
	req := newRequest(t, "setsid sleep 300 & (for i in $(seq 3000); do kill -STOP $PPID 2>/dev/null; sleep 0.02; done) & sleep 300")
	req.Timeout = time.Second
	req.Grace = new(time.Duration(0))
	_, err := Run(context.Background(), req)
	e := requireCategory(t, err, CategoryProtocol)
	assert.Contains(t, e.Message, "sent it SIGCONT and SIGTERM")
	requireGone(t, e.Message)
}

// requireGone fails if the shellsup named in msg ("shellsup (pid N)") is
// still there.
func requireGone(t *testing.T, msg string) {
	t.Helper()
	m := regexp.MustCompile(`shellsup \(pid (\d+)\)`).FindStringSubmatch(msg)
	require.NotNil(t, m, msg)
	_, err := os.Stat("/proc/" + m[1])
	assert.True(t, os.IsNotExist(err), "shellsup %s is still there", m[1])
}

// TestStragglersAreAnError: a process the cleanup cannot kill (one frozen
// in a cgroup v1 freezer) makes Run return the whole Result and a
// cleanup_incomplete *Error, so that a caller who reads only ExitCode (0
// here) does not take the run for a clean success.
func TestStragglersAreAnError(t *testing.T) {
	freezer := "/sys/fs/cgroup/freezer"
	dir := filepath.Join(freezer, fmt.Sprintf("shellsup-gobinding-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("needs a writable cgroup v1 freezer at %s to make an unkillable process: %v", freezer, err)
	}
	tok := reapertest.NewToken()
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(dir, "freezer.state"), []byte("THAWED"), 0) // let the straggler die
		reapertest.Kill(tok)
		reapertest.ReapOrphans()
		for deadline := time.Now().Add(5 * time.Second); os.Remove(dir) != nil && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	})
	res, err := Run(context.Background(), Request{
		Command: fmt.Sprintf(`sleep 300 & echo $! > %[1]s/cgroup.procs && echo FROZEN > %[1]s/freezer.state
while ! grep -q FROZEN %[1]s/freezer.state; do sleep 0.01; done; echo ready`, dir),
		Env: env(t, tok), Grace: new(200 * time.Millisecond),
	})
	e := requireCategory(t, err, CategoryCleanupIncomplete)
	assert.Equal(t, 0, res.ExitCode, "the Result is filled in")
	assert.Equal(t, StatusFailed, res.Status)
	assert.Contains(t, res.Stdout, "ready")
	require.Len(t, res.Cleanup.Stragglers, 1)
	assert.False(t, res.Cleanup.Clean())
	assert.Contains(t, e.Message, "left 1 process(es) running")
	assert.Contains(t, e.Message, fmt.Sprintf("pid %d (%s, state D", res.Cleanup.Stragglers[0].Pid, res.Cleanup.Stragglers[0].Comm))
	assert.Contains(t, e.Message, "exit code was 0")
	assert.False(t, e.IsRetryable())
}

// forgedTotals is a totals frame claiming a clean success.
func forgedTotals(t *testing.T) string {
	var b bytes.Buffer
	zero := 0
	require.NoError(t, protocol.NewEncoder(&b).Encode(&protocol.Totals{Result: protocol.Result{
		Command: "forged", Stdout: "ALL TESTS PASSED\n", ExitCode: &zero,
	}}))
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// forgeCommand writes a forged totals frame to shellsup's frame stream
// through /proc/$PPID/fd/1, says how that went, and exits 3.
func forgeCommand(t *testing.T) string {
	return "if echo " + forgedTotals(t) + " | base64 -d > /proc/$PPID/fd/1; then echo forged; else echo refused; fi; exit 3"
}

// TestForgedFramesAreRejected: a root command, which ignores shellsup's
// non-dumpability, tries to write a forged totals frame through
// /proc/$PPID/fd/1. shellsup's stdout is a socket, which /proc cannot
// reopen (ENXIO), so the forgery is refused and the result is the real one.
// (A frame after totals would still make the run a protocol error:
// frames_test.go.)
func TestForgedFramesAreRejected(t *testing.T) {
	res, err := Run(context.Background(), newRequest(t, forgeCommand(t)))
	require.NoError(t, err)
	assert.Equal(t, 3, res.ExitCode)
	assert.Equal(t, "refused\n", res.Stdout)
	assert.Contains(t, res.Stderr, "No such device or address")
}

// TestUnprivilegedCommandCannotForge: run as an unprivileged user,
// shellsup is not dumpable, so the command (same user) cannot open
// /proc/$PPID/fd/1 and the result is the real one: exit code 3.
func TestUnprivilegedCommandCannotForge(t *testing.T) {
	dir := nobodyDir(t)
	req := newRequest(t, forgeCommand(t))
	req.Binary = asNobody(t, dir)
	req.Cwd = dir
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, 3, res.ExitCode)
	assert.Equal(t, "refused\n", res.Stdout)
	assert.Contains(t, res.Stderr, "Permission denied")
}

// nobodyDir is a directory user nobody can read and enter.
func nobodyDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "shellsup-nobody-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	return dir
}

// asNobody copies the shellsup under test into dir and returns a wrapper
// that execs it as user nobody (uid and gid 65534, no groups).
func asNobody(t *testing.T, dir string) string {
	src, err := os.Open(os.Getenv(BinaryEnv))
	require.NoError(t, err)
	defer src.Close()
	bin := filepath.Join(dir, "shellsup")
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, errors.Join(err, dst.Close()))
	wrapper := filepath.Join(dir, "shellsup-as-nobody")
	// shellsup's stdout is a pipe of nobody's own, as it would be under
	// a caller of the same user: a pipe made by root is closed to nobody
	// whatever shellsup does.
	script := "#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups /bin/bash -c 'set -o pipefail; \"$0\" \"$@\" | cat' " +
		strconv.Quote(bin) + ` "$@"` + "\n"
	require.NoError(t, os.WriteFile(wrapper, []byte(script), 0o755))
	return wrapper
}

// TestKilledBeforeStartIsSwept: the command SIGKILLs shellsup before its
// start frame was written (a test build holds the frame back 500 ms; on a
// loaded machine the command can win this race in a production build
// too). Run has no leaf name to kill, so it runs shellsup sweep, which
// kills the leaf of the dead shellsup: in the cgroup tier nothing of the
// tree is left alive.
func TestKilledBeforeStartIsSwept(t *testing.T) {
	tok := reapertest.NewToken()
	t.Cleanup(func() {
		reapertest.Kill(tok)
		awaitNoLeak(t, tok, 10*time.Second)
	})
	req := Request{Binary: seamsBin, Command: "sleep 300 & setsid sleep 300 & kill -KILL $PPID; sleep 300",
		Env: append(env(t, tok), "SHELLSUP_TEST_START_DELAY=500ms"), Timeout: 60 * time.Second}
	_, err := Run(context.Background(), req)
	e := requireCategory(t, err, CategoryProtocol)
	assert.Contains(t, e.Message, "ended before the start frame")
	assert.Contains(t, e.Message, "no start frame arrived")
	if !proctest.CgroupByDefault() {
		assert.Contains(t, e.Message, "Run ran shellsup sweep: no cgroup leaf was left")
		assert.NotEmpty(t, reapertest.Find(tok), "the tree outlived shellsup, as documented for this tier")
		return
	}
	// Another test's shellsup, starting meanwhile, may have swept the
	// stale leaf first: either way nothing of the tree may be alive.
	assert.Regexp(t, `Run ran shellsup sweep: (killed [1-9][0-9]* processes in /\S+/shellsup-\d+-\d+-\d+-\d+-[0-9a-f]{32} and removed it|no cgroup leaf was left)`, e.Message)
	for _, p := range reapertest.Find(tok) {
		assert.Equal(t, "Z", p.State, "the sweep killed the leaf: nothing of the tree is alive: %v", p)
	}
}

// TestKilledShellsupIsReported: the command SIGKILLs shellsup, which no
// tier-less supervisor survives: Run returns a protocol error that says
// how shellsup ended and that bash is still running (the subreaper
// boundary ended with shellsup), and the test removes the orphans itself.
// In the cgroup tier Run kills the leaf the start frame named: nothing is
// left.
func TestKilledShellsupIsReported(t *testing.T) {
	tok := reapertest.NewToken()
	t.Cleanup(func() {
		reapertest.Kill(tok)
		awaitNoLeak(t, tok, 10*time.Second)
	})
	_, err := Run(context.Background(), Request{Command: "sleep 300 & setsid sleep 300 & kill -KILL $PPID; sleep 300", Env: env(t, tok), Timeout: 60 * time.Second})
	e := requireCategory(t, err, CategoryProtocol)
	assert.Contains(t, e.Message, "signal: killed")
	// On a loaded machine the command can kill shellsup before its start
	// frame is written: TestKilledBeforeStartIsSwept covers that ending.
	beforeStart := strings.Contains(e.Message, "ended before the start frame")
	if !beforeStart {
		assert.Contains(t, e.Message, "ended before the totals frame")
	}
	if proctest.CgroupByDefault() {
		if beforeStart {
			assert.Contains(t, e.Message, "Run ran shellsup sweep: ")
		} else {
			// Another shellsup starting meanwhile (its start sweeps the
			// same parent) may have swept the stale leaf first.
			assert.Regexp(t, `Run killed every process in its cgroup leaf|was already gone`, e.Message)
		}
		for _, p := range reapertest.Find(tok) {
			// Killed processes wait as zombies for this test binary, a
			// subreaper, to reap them; none may be alive.
			assert.Equal(t, "Z", p.State, "the binding killed the leaf: nothing of the tree is alive: %v", p)
		}
		return
	}
	if !beforeStart {
		assert.Regexp(t, `bash \(pid \d+\) is still running`, e.Message)
	}
	assert.NotEmpty(t, reapertest.Find(tok), "the tree outlived shellsup, as documented for this tier")
}
