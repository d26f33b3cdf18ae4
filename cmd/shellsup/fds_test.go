//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// underNofile writes a wrapper that runs shellsup under RLIMIT_NOFILE
// soft:hard, for opts.bin.
func underNofile(t *testing.T, soft, hard int) string {
	t.Helper()
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit not installed")
	}
	wrapper := filepath.Join(t.TempDir(), "shellsup-nofile")
	script := fmt.Sprintf("#!/bin/sh\nexec %s --nofile=%d:%d %s \"$@\"\n", prlimit, soft, hard, shellsupBin)
	require.NoError(t, os.WriteFile(wrapper, []byte(script), 0o755))
	return wrapper
}

// TestCommandSeesOriginalNofile: shellsup raises its own soft
// RLIMIT_NOFILE to the hard limit, and the command gets the original.
func TestCommandSeesOriginalNofile(t *testing.T) {
	r := runShellsup(t, opts{
		bin:     underNofile(t, 1000, 4096),
		command: `ulimit -Sn; ulimit -Hn; grep 'Max open files' /proc/$PPID/limits`,
	})
	tot := requireTotals(t, r)
	lines := strings.Split(strings.TrimSpace(tot.Stdout), "\n")
	require.Len(t, lines, 3, tot.Stdout)
	assert.Equal(t, "1000", lines[0], "the command's soft limit")
	assert.Equal(t, "4096", lines[1], "the command's hard limit")
	own := strings.Fields(lines[2]) // Max open files SOFT HARD files
	require.Len(t, own, 6, lines[2])
	assert.NotEqual(t, "1000", own[3], "shellsup raised its own soft limit")
	assert.Equal(t, "4096", own[4], "shellsup's hard limit")
}

// TestWideTreeUnderNofile1024: 5000 descendants (50 parents × 100
// sleepers, each with a 120 s self-destruct) under RLIMIT_NOFILE 1024: the
// cleanup holds no fd per process, so nothing is left and nothing is
// reported as a straggler.
func TestWideTreeUnderNofile1024(t *testing.T) {
	if testing.Short() {
		t.Skip("5000 processes")
	}
	marks := filepath.Join(t.TempDir(), "marks")
	command := fmt.Sprintf(`for i in $(seq 50); do (for j in $(seq 100); do sleep 120 & done; echo >> %[1]s; wait) & done
while [ "$(wc -l < %[1]s 2>/dev/null || echo 0)" -lt 50 ]; do sleep 0.05; done
echo started`, marks)
	r := runShellsup(t, opts{bin: underNofile(t, 1024, 1024), command: command})
	tot := requireTotals(t, r)
	assert.Contains(t, tot.Stdout, "started")
	assert.Equal(t, 0, r.exit, "stderr %q", r.stderr)
	assert.Empty(t, tot.Cleanup.Stragglers)
	assert.GreaterOrEqual(t, tot.Cleanup.Signalled, 5000)
	t.Logf("cleanup of 5050 processes under nofile 1024: %d ms, %d rounds, %d signalled, %d killed, %d reaped",
		tot.Cleanup.Ms, tot.Cleanup.Rounds, tot.Cleanup.Signalled, tot.Cleanup.Killed, tot.Cleanup.Reaped)
}

// TestNofileTamper: the command lowers shellsup's RLIMIT_NOFILE to 5:5
// (fds 0–4 only) and leaves background processes, in and out of their own
// sessions: the cleanup works on its reserved low fds.
func TestNofileTamper(t *testing.T) {
	r := runShellsup(t, opts{
		args: []string{"--grace", "0.5"},
		command: `prlimit --pid $PPID --nofile=5:5 || exit 9
for i in $(seq 20); do setsid sleep 120 & done
(trap '' TERM; sleep 120 & sleep 120 & wait) &
for i in $(seq 10); do (sleep 120 &); done
echo left`,
	})
	tot := requireTotals(t, r)
	assert.Contains(t, tot.Stdout, "left")
	assert.Equal(t, 0, r.exit, "stderr %q", r.stderr)
	assert.Empty(t, tot.Cleanup.Stragglers)
	assert.GreaterOrEqual(t, tot.Cleanup.Signalled, 20, "the 20 setsid sleeps bash forked itself, at least")
}
