//go:build linux

package main

import (
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/protocol"
)

// TestStatusWord: totals.status names how the run ended, one test per
// word (failed after a straggler is in TestStragglerReported).
func TestStatusWord(t *testing.T) {
	rows := []struct {
		name, word string
		o          opts
		exit       int
	}{
		{"exit 0", protocol.StatusExited, opts{command: "exit 0"}, 0},
		{"exit 3", protocol.StatusExited, opts{command: "exit 3"}, 3},
		{"not found", protocol.StatusExited, opts{command: "no-such-command-shellsup"}, 127},
		{"kill -9 $$", protocol.StatusSignaled, opts{command: "kill -9 $$"}, 137},
		{"timeout", protocol.StatusTimeout, opts{args: []string{"--timeout", "0.3"}, command: "echo ready; sleep 30"}, 124},
		{"cancel frame", protocol.StatusCancelled, opts{command: "echo ready; sleep 30", control: true,
			onFrame: onReady(func(r *running) { _ = r.send(&protocol.Cancel{}) })}, 130},
		{"SIGTERM to shellsup", protocol.StatusCancelled, opts{command: "echo ready; sleep 30",
			onFrame: onReady(func(r *running) { r.signal(syscall.SIGTERM) })}, 143},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			r := runShellsup(t, row.o)
			tot := requireTotals(t, r)
			assert.Equal(t, row.word, tot.Status)
			assert.Equal(t, row.exit, r.exit)
		})
	}
}

// TestStatusFailedOnError: a run that cannot happen says failed in its
// error frame, beside the category.
func TestStatusFailedOnError(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "spawned")
	missing := filepath.Join(t.TempDir(), "no-such-workspace")
	r := runShellsup(t, opts{args: []string{"--workspace", missing}, command: "touch " + marker})
	assertRefused(t, r, protocol.CategoryValidation, "does not exist", marker)
	assert.Equal(t, protocol.StatusFailed, r.errf.Status)
}

// TestStatusOOM: a hog killed at --max-memory is oom when bash's status
// shows it (the hog is the last command); when bash goes on and exits 0,
// the run exited. The limit is read back inside the leaf first.
func TestStatusOOM(t *testing.T) {
	needCgroupTier(t)
	want := strconv.Itoa(64 << 20)
	check := limitCheck("memory.max", "memory", "memory.limit_in_bytes", want)
	hog := `/usr/bin/python3 -c "b = b'x' * (300 << 20)"`
	for _, row := range []struct{ name, tail, word string }{
		{"hog last", hog, protocol.StatusOOM},
		{"exit 0 after the hog", hog + "; echo hog exit $?", protocol.StatusExited},
	} {
		t.Run(row.name, func(t *testing.T) {
			r := runShellsup(t, opts{args: []string{"--max-memory", "64M", "--timeout", "60"}, command: check + row.tail})
			if r.errf != nil && r.errf.Category == protocol.CategoryContainmentUnavailable {
				t.Skipf("this tier has no memory control: %s", r.errf.Message)
			}
			tot := requireTotals(t, r)
			require.NotEqual(t, 99, r.exit, "the limit was not in force: %s", tot.Stdout)
			require.GreaterOrEqual(t, tot.Cleanup.OOMKills, int64(1), "the hog was not OOM-killed: %s", tot.Stdout)
			assert.Equal(t, row.word, tot.Status)
		})
	}
}
