//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/protocol"
)

// shape is a way a command leaves processes behind. setup runs in bash and
// leaves them running; "ready" is printed after it.
type shape struct {
	name  string
	setup string
	slow  bool // needs more than the default setup time before a timeout
	min   int  // processes the cleanup must find and signal on the finish path
}

func shapes(t *testing.T) []shape {
	dir := t.TempDir()
	chain := filepath.Join(dir, "chain.sh")
	require.NoError(t, os.WriteFile(chain, []byte("#!/bin/bash\nif [ \"$1\" -gt 0 ]; then \"$0\" $(( $1 - 1 )); exit $?; fi\necho ready\nexec sleep 300\n"), 0o755))
	return []shape{
		{name: "background job holding stdout", setup: "sleep 300 &", min: 1},
		{name: "subshell", setup: "(sleep 300; true) & while ! pgrep -s 0 -x sleep >/dev/null; do sleep 0.01; done", min: 2},
		// The right side outlives its cat: when the SIGTERM ends sleep first, the cat it feeds sees
		// EOF and may exit before its own signal, which would then not be counted.
		{name: "pipeline", setup: "sleep 300 | { cat; sleep 300; } & until pgrep -s 0 -x sleep >/dev/null && pgrep -s 0 -x cat >/dev/null; do sleep 0.01; done", min: 2},
		{name: "setsid", setup: "setsid sleep 300 &", min: 1},
		{name: "double fork on dev null", setup: "( (setsid sleep 300 </dev/null >/dev/null 2>&1 &) & )", min: 1},
		{name: "nohup and disown", setup: "nohup sleep 300 >/dev/null 2>&1 & disown", min: 1},
		{name: "TERM HUP INT ignorer loop", setup: "(trap '' TERM HUP INT; while :; do sleep 1; done) &", min: 1},
		{name: "stopped process", setup: "sleep 300 & kill -STOP $! && while ! grep -q '^State:.T' /proc/$!/status; do :; done", min: 1},
		{name: "set -m jobs in other process groups", setup: "set -m; sleep 300 & sleep 300 & set +m", min: 2},
		{name: "50-level chain", setup: chain + " 50 & while ! pgrep -s 0 -x sleep >/dev/null; do sleep 0.01; done", slow: true, min: 51},
		{name: "300 wide", setup: "for i in $(seq 300); do sleep 300 & done", slow: true, min: 300},
		{name: "zombie maker", setup: inBackground(helpers.Shell("zombies"), filepath.Join(dir, "zombies")), min: 1},
		{name: "fork from a non-leader thread", setup: inBackground(helpers.Shell("thread-fork"), filepath.Join(dir, "thread-fork")), min: 2},
		{name: "nested subreaper dies leaving orphans", setup: helpers.Shell("subreaper-orphans"), min: 1},
	}
}

// inBackground runs a helper in the background and waits until it has
// set itself up (it creates the file SHELLSUP_TEST_READY names).
func inBackground(helper, readyFile string) string {
	return "SHELLSUP_TEST_READY=" + readyFile + " " + helper + " & while [ ! -e " + readyFile + " ]; do sleep 0.01; done"
}

// TestShapesFinish: bash exits at once, leaving the shape running. The
// cleanup must kill it all and shellsup must return promptly with bash's
// status.
func TestShapesFinish(t *testing.T) {
	for _, s := range shapes(t) {
		t.Run(s.name, func(t *testing.T) {
			r := runShellsup(t, opts{args: []string{"--grace", "0.5"}, command: s.setup + "\necho ready; exit 7"})
			tot := requireTotals(t, r)
			assert.Equal(t, 7, *tot.ExitCode)
			assert.Equal(t, 7, r.exit)
			assert.Equal(t, "exit", tot.Cleanup.Trigger)
			assert.Contains(t, tot.Stdout, "ready")
			assert.GreaterOrEqual(t, tot.Cleanup.Signalled, s.min, "cleanup signalled too few processes")
			assertPrompt(t, tot, 500*time.Millisecond)
		})
	}
}

// TestShapesTimeout: the shape is running when the timeout fires.
func TestShapesTimeout(t *testing.T) {
	for _, s := range shapes(t) {
		t.Run(s.name, func(t *testing.T) {
			timeout := "1.5"
			if s.slow {
				timeout = "4"
			}
			r := runShellsup(t, opts{args: []string{"--timeout", timeout, "--grace", "0.5"}, command: s.setup + "\necho ready; sleep 300"})
			tot := requireTotals(t, r)
			assert.True(t, tot.TimedOut)
			assert.False(t, tot.Cancelled)
			assert.Equal(t, 124, r.exit)
			assert.Contains(t, tot.Stdout, "ready", "the shape was not set up before the timeout")
			assert.Equal(t, []string{"timeout", "totals"}, lastTwoControl(r))
			assertPrompt(t, tot, 500*time.Millisecond)
		})
	}
}

// TestShapesCancel: a cancel frame arrives once the shape is running.
func TestShapesCancel(t *testing.T) {
	for _, s := range shapes(t) {
		t.Run(s.name, func(t *testing.T) {
			r := runShellsup(t, opts{
				args:    []string{"--grace", "0.5"},
				command: s.setup + "\necho ready; sleep 300",
				control: true,
				onFrame: onReady(func(r *running) { require.NoError(t, r.send(&protocol.Cancel{})) }),
			})
			tot := requireTotals(t, r)
			assert.True(t, tot.Cancelled)
			assert.False(t, tot.TimedOut)
			assert.Equal(t, protocol.ReasonRequest, tot.CancelReason)
			assert.Equal(t, 130, r.exit)
			assert.Equal(t, []string{"cancel", "totals"}, lastTwoControl(r))
			assertPrompt(t, tot, 500*time.Millisecond)
		})
	}
}

// assertPrompt checks that the cleanup took no longer than the grace plus
// the kill budget: whatever the shape, it converged and did not run into
// its hard deadline. (Bounds are loose; timings are measured in make bench.)
func assertPrompt(t *testing.T, tot *protocol.Totals, grace time.Duration) {
	t.Helper()
	assert.Less(t, time.Duration(tot.Cleanup.Ms)*time.Millisecond, grace+3*time.Second, "cleanup ran into its deadline")
	assert.Less(t, time.Duration(tot.DurationMs)*time.Millisecond, 30*time.Second, "the run hung")
}

// lastTwoControl lists the non-progress frames after start.
func lastTwoControl(r result) []string {
	var out []string
	for _, f := range r.frames[1:] {
		if f.Type() != protocol.TypeProgress {
			out = append(out, f.Type())
		}
	}
	return out
}
