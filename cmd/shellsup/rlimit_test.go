//go:build linux

package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNprocTamper: an unprivileged command lowers shellsup's RLIMIT_NPROC
// to 1 (prlimit is allowed on any process of the same uid), so shellsup
// can start no thread; then it keeps shellsup busy (200 MB through its
// output pipes, a wide tree to clean up, CPU-bound writers) until the timeout, with
// GOMAXPROCS=32 as on a large host (every P may want a thread). A Go
// runtime that needs a thread it cannot start aborts, which would end the
// subreaper boundary;
// shellsup started its threads before the command existed, so the run
// times out and cleans up as usual, nothing left. (Root is exempt from
// RLIMIT_NPROC, hence nobody.)
func TestNprocTamper(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to become nobody")
	}
	dir, wrapper := nobodyShellsup(t)
	command := `prlimit --pid $PPID --nproc=1:1 || exit 9
grep '^Max processes' /proc/$PPID/limits
for i in $(seq 500); do setsid sleep 120 & done
(trap '' TERM; for i in $(seq 50); do sleep 120 & done; wait) &
head -c 1G /dev/urandom & head -c 1G /dev/urandom >&2 &
head -c 200M /dev/zero
sleep 120`
	r := runShellsup(t, opts{bin: wrapper, args: []string{"--cwd", dir, "--timeout", "4", "--grace", "0.3"}, command: command, env: []string{"HOME=" + dir, "GOMAXPROCS=32"}})
	tot := requireTotals(t, r)
	require.Regexp(t, `^Max processes\s+1\s+1\s`, tot.Stdout, "the limit was lowered: stderr %q", tot.Stderr)
	assert.Greater(t, tot.StdoutBytes, int64(200<<20), "the drain ran through shellsup under the limit")
	assert.Greater(t, tot.StderrBytes, int64(1<<20))
	assert.True(t, tot.TimedOut)
	assert.Empty(t, tot.Cleanup.Stragglers)
	assert.GreaterOrEqual(t, tot.Cleanup.Signalled, 550)
	assert.Equal(t, 124, r.exit)
}
