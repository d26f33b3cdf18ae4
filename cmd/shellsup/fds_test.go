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

// TestNofileStarved: the command lowers shellsup's RLIMIT_NOFILE so far
// that no fd can be opened at all (3:3 with fds 0–2 taken, or 0:0) and
// leaves a setsid sleeper, a TERM-ignoring parent with children, and
// orphans behind; as nobody the hard limit cannot be raised back. The
// cleanup works from the children file it opened before the command
// existed and kills by pid, each kill reparenting the next layer to
// shellsup: nothing is left, nothing is reported as a straggler. Before,
// the cleanup could open nothing: cleanup_incomplete, the sleeper alive.
func TestNofileStarved(t *testing.T) {
	for _, tc := range []struct {
		name, limit, user string
		timeout           bool
	}{
		{name: "root/3:3/exit", limit: "3:3", user: "root"},
		{name: "nobody/3:3/exit", limit: "3:3", user: "nobody"},
		{name: "nobody/0:0/timeout", limit: "0:0", user: "nobody", timeout: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, dir := shellsupBin, t.TempDir()
			if tc.user == "nobody" {
				if os.Geteuid() != 0 {
					t.Skip("needs root to become nobody")
				}
				dir, bin = nobodyShellsup(t)
				dir = filepath.Join(dir, "home")
				require.NoError(t, os.Mkdir(dir, 0o755))
				require.NoError(t, os.Chown(dir, 65534, 65534))
			}
			pidFile := filepath.Join(dir, "sleeper.pid")
			command := fmt.Sprintf(`prlimit --pid $PPID --nofile=%s || exit 9
grep '^Max open files' /proc/$PPID/limits
setsid sh -c 'echo $$ > %s; exec sleep 120' &
(trap '' TERM; sleep 120 & sleep 120 & wait) &
for i in 1 2 3; do (sleep 120 &); done
for i in $(seq 500); do [ -s %[2]s ] && break; sleep 0.01; done
echo left`, tc.limit, pidFile)
			args := []string{"--no-cgroup", "--cwd", dir, "--grace", "0.3"}
			if tc.timeout {
				command += "\nsleep 120"
				args = append(args, "--timeout", "1")
			}
			r := runShellsup(t, opts{bin: bin, args: args, command: command, env: []string{"HOME=" + dir}})
			tot := requireTotals(t, r)
			soft, _, _ := strings.Cut(tc.limit, ":")
			require.Regexp(t, `Max open files\s+`+soft+`\s+`+soft+`\s`, tot.Stdout, "the limit was lowered: stderr %q", tot.Stderr)
			assert.Contains(t, tot.Stdout, "left")
			assert.Empty(t, tot.Cleanup.Stragglers)
			assert.GreaterOrEqual(t, tot.Cleanup.Signalled, 4, "the sleeper, the TERM-ignoring parent and the orphans")
			b, err := os.ReadFile(pidFile)
			require.NoError(t, err)
			pid := strings.TrimSpace(string(b))
			_, err = os.Stat("/proc/" + pid)
			assert.True(t, os.IsNotExist(err), "the setsid sleeper %s is gone", pid)
		})
	}
}
