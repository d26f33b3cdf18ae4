package shellsup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"

	"github.com/shellsup/shellsup/reaper/reapertest"
)

// bound is what a run may take beyond the grace it was given: shellsup's
// kill budget and drain, a login shell's start, and a loaded machine.
const bound = 4 * time.Second

func TestRunReportsOutputAndStatus(t *testing.T) {
	req := newRequest(t, `printf 'out\n'; printf 'err\n' >&2; exit 3`)
	res, err := Run(context.Background(), req)
	require.NoError(t, err)

	wd, err := os.Getwd()
	require.NoError(t, err)
	assert.Equal(t, req.Command, res.Command)
	assert.Equal(t, wd, res.Cwd)
	assert.Equal(t, "out\n", res.Stdout)
	assert.Equal(t, "err\n", res.Stderr)
	assert.Equal(t, 3, res.ExitCode)
	assert.Empty(t, res.Signal)
	assert.False(t, res.Cancelled)
	assert.False(t, res.TimedOut)
	assert.Empty(t, res.CancelReason)
	assert.False(t, res.Truncated)
	assert.EqualValues(t, 8, res.TotalBytes)
	assert.EqualValues(t, 8, res.CapturedBytes)
	assert.EqualValues(t, 8, res.ProgressBytes)
	assert.Less(t, res.Duration, bound)
	assert.Equal(t, proctest.Containment(false), res.Cleanup.Tier)
	assert.Equal(t, "exit", res.Cleanup.Trigger)
	assert.GreaterOrEqual(t, res.Cleanup.Reaped, 1, "bash at least")
	assert.True(t, res.Cleanup.Clean(), "stragglers: %v", res.Cleanup.Stragglers)
}

func TestRunExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command string
		code    int
		signal  string
	}{
		{"zero", "exit 0", 0, ""},
		{"one", "exit 1", 1, ""},
		{"cannot execute", "exit 126", 126, ""},
		{"command not found", "shellsup-no-such-command-here", 127, ""},
		{"max", "exit 255", 255, ""},
		{"SIGTERM is 128+15", "kill -TERM $$", 143, "SIGTERM"},
		{"SIGKILL is 128+9", "kill -KILL $$", 137, "SIGKILL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(context.Background(), newRequest(t, tc.command))
			require.NoError(t, err, "a non-zero exit is a result, not an error")
			assert.Equal(t, tc.code, res.ExitCode)
			assert.Equal(t, tc.signal, res.Signal)
			assert.False(t, res.Cancelled || res.TimedOut)
		})
	}
}

func TestRunCwd(t *testing.T) {
	dir := t.TempDir()
	req := newRequest(t, "pwd")
	req.Cwd = dir
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, dir, res.Cwd)
	assert.Equal(t, dir+"\n", res.Stdout)

	t.Run("relative", func(t *testing.T) {
		req := newRequest(t, "pwd")
		req.Cwd = "."
		res, err := Run(context.Background(), req)
		require.NoError(t, err)
		wd, _ := os.Getwd()
		assert.Equal(t, wd, res.Cwd, "reported resolved and absolute")
		assert.True(t, filepath.IsAbs(res.Cwd))
	})
}

func TestRunEnv(t *testing.T) {
	t.Run("non-nil replaces", func(t *testing.T) {
		req := newRequest(t, `echo "probe=$SHELLSUP_GOBINDING_PROBE foo=$FOO"`)
		t.Setenv("SHELLSUP_GOBINDING_PROBE", "from the harness")
		req.Env = append(req.Env, "FOO=bar")
		res, err := Run(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, "probe= foo=bar\n", res.Stdout)
	})
	t.Run("nil inherits", func(t *testing.T) {
		tok := reapertest.NewToken()
		t.Cleanup(func() { reapertest.Check(t, tok) })
		t.Setenv(reapertest.TokenVar, string(tok))
		t.Setenv("SHELLSUP_GOBINDING_PROBE", "from the harness")
		res, err := Run(context.Background(), Request{Command: `echo "probe=$SHELLSUP_GOBINDING_PROBE"`})
		require.NoError(t, err)
		assert.Equal(t, "probe=from the harness\n", res.Stdout)
	})
}

func TestRunBudgetTruncates(t *testing.T) {
	req := newRequest(t, `head -c 1000 /dev/zero | tr '\0' x`)
	req.Budget = 100
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	marker := "\n... output truncated at 100-byte capture limit ...\n"
	assert.True(t, res.Truncated)
	assert.Equal(t, strings.Repeat("x", 100-len(marker))+marker, res.Stdout)
	assert.EqualValues(t, 100, res.CapturedBytes)
	assert.EqualValues(t, 1000, res.TotalBytes)
}

// A background job that holds stdout and a setsid child: bash exits at
// once, and Run returns without waiting for them, because shellsup kills
// them — where os/exec would wait for the pipe (WaitDelay) and leave them.
func TestRunExitKillsBackgroundJobs(t *testing.T) {
	req := newRequest(t, `sleep 300 & setsid sleep 300 & echo done`)
	req.Grace = new(time.Second)
	begin := time.Now()
	res, err := Run(context.Background(), req)
	elapsed := time.Since(begin)
	require.NoError(t, err)
	assert.Equal(t, "done\n", res.Stdout)
	assert.Equal(t, 0, res.ExitCode)
	assert.False(t, res.Cancelled || res.TimedOut)
	assert.GreaterOrEqual(t, res.Cleanup.Signalled, 2, "both sleeps")
	assert.True(t, res.Cleanup.Clean(), "stragglers: %v", res.Cleanup.Stragglers)
	assert.Less(t, elapsed, time.Second+bound)
}

func TestRunTimeout(t *testing.T) {
	req := newRequest(t, `setsid sleep 300 & sleep 300 & echo started; sleep 300`)
	req.Timeout = 300 * time.Millisecond
	req.Grace = new(500 * time.Millisecond)
	begin := time.Now()
	res, err := Run(context.Background(), req)
	elapsed := time.Since(begin)
	require.NoError(t, err, "a timeout is a result, not an error")
	assert.True(t, res.TimedOut)
	assert.False(t, res.Cancelled)
	assert.Equal(t, "started\n", res.Stdout)
	assert.Equal(t, 143, res.ExitCode, "bash died of the cleanup's SIGTERM")
	assert.Equal(t, "SIGTERM", res.Signal)
	assert.Equal(t, "timeout", res.Cleanup.Trigger)
	assert.GreaterOrEqual(t, res.Cleanup.Signalled, 3)
	assert.Less(t, elapsed, req.Timeout+500*time.Millisecond+bound)
}

// Cancelling ctx sends the cancel frame; Run returns after the cleanup,
// within the grace (spent on a TERM ignorer) plus a bound, with Cancelled
// set and no error.
func TestRunCancel(t *testing.T) {
	const grace = time.Second
	req := newRequest(t, `setsid sleep 300 & sleep 300 & (trap '' TERM; echo ready; exec sleep 300) & wait`)
	req.Grace = new(grace)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelledAt time.Time
	req.Progress = func(stream, text string) error {
		if strings.Contains(text, "ready") && cancelledAt.IsZero() {
			cancelledAt = time.Now()
			cancel()
		}
		return nil
	}
	res, err := Run(ctx, req)
	require.NoError(t, err, "a cancellation is a result, not an error")
	require.False(t, cancelledAt.IsZero(), "the command never said ready")
	elapsed := time.Since(cancelledAt)

	assert.True(t, res.Cancelled)
	assert.False(t, res.TimedOut)
	assert.Equal(t, "request", res.CancelReason)
	assert.Equal(t, "cancel", res.Cleanup.Trigger)
	assert.GreaterOrEqual(t, res.Cleanup.Signalled, 4, "bash, the two sleeps, the TERM ignorer")
	assert.GreaterOrEqual(t, res.Cleanup.Killed, 1, "the TERM ignorer needed SIGKILL")
	assert.True(t, res.Cleanup.Clean(), "stragglers: %v", res.Cleanup.Stragglers)
	assert.GreaterOrEqual(t, elapsed, grace-100*time.Millisecond, "the TERM ignorer had its grace")
	assert.Less(t, elapsed, grace+bound)
}

func TestRunContextDoneBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sentinel := filepath.Join(t.TempDir(), "spawned")
	req := newRequest(t, "true")
	req.Binary = writeScript(t, "touch "+sentinel)
	_, err := Run(ctx, req)
	require.ErrorIs(t, err, context.Canceled)
	assert.NoFileExists(t, sentinel, "nothing may be spawned")
}

// A shellsup that stops talking after a cancel is told to cancel again
// (SIGCONT, SIGTERM) after the grace plus slack, and Run reports a protocol
// error saying so.
func TestRunKillsASilentShellsup(t *testing.T) {
	shortSlack(t, 300*time.Millisecond)

	start := filepath.Join(t.TempDir(), "start.bin")
	require.NoError(t, os.WriteFile(start, goldenWire(t, "start"), 0o644))
	req := newRequest(t, "true")
	req.Binary = writeScript(t, "cat "+start+"; exec sleep 300")
	req.Grace = new(time.Duration(0))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	begin := time.Now()
	_, err := Run(ctx, req)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, CategoryProtocol, e.Category)
	assert.Contains(t, e.Message, "gave up on it: no totals within the grace")
	assert.Contains(t, e.Message, "sent it SIGCONT and SIGTERM")
	assert.Contains(t, e.Message, "signal: terminated")
	assert.False(t, e.IsRetryable())
	assert.Less(t, time.Since(begin), bound)
}

// One Run per goroutine: runs do not interfere.
func TestRunConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	errs := make([]error, 8)
	outs := make([]string, 8)
	reqs := make([]Request, 8)
	for i := range reqs {
		reqs[i] = newRequest(t, `echo "$RUN"`)
		reqs[i].Env = append(reqs[i].Env, "RUN="+strings.Repeat("r", i+1))
	}
	for i := range reqs {
		wg.Go(func() {
			res, err := Run(context.Background(), reqs[i])
			errs[i], outs[i] = err, res.Stdout
		})
	}
	wg.Wait()
	for i := range reqs {
		require.NoError(t, errs[i])
		assert.Equal(t, strings.Repeat("r", i+1)+"\n", outs[i])
	}
}

// shortSlack shortens the watchdog's slack for the runs of one test.
func shortSlack(t *testing.T, d time.Duration) {
	old := watchdogSlack
	watchdogSlack = d
	t.Cleanup(func() { watchdogSlack = old })
}
