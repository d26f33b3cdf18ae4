//go:build linux

package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/protocol"
)

// stormCommand leaves 300 TERM-ignoring sleepers, a TERM-ignoring forker
// that adds up to 1000 more, one every 2 ms, and 4 TERM-ignoring
// accomplices that, for stormSeconds (bounded: everything ends by itself),
// send SIGCONT to the whole process group (every member of the tree but
// shellsup, which is in a session of its own), SIGSTOP each other and
// SIGSTOP bash, shellsup's child, over and over. Then bash waits.
const stormSeconds = 12

var stormCommand = fmt.Sprintf(`trap '' TERM
for i in $(seq 300); do (trap '' TERM; exec sleep %[1]d) & done
(trap '' TERM; for i in $(seq 1000); do (trap '' TERM; exec sleep %[1]d) & sleep 0.002; done; wait) &
storm() {
	trap '' TERM; end=$((SECONDS+%[1]d)); n=0
	while [ $SECONDS -lt $end ] && [ $n -lt 2000000 ]; do
		kill -CONT 0 2>/dev/null; kill -STOP $1 $$ 2>/dev/null; kill -CONT 0 2>/dev/null; n=$((n+1))
	done
}
storm $$ & a=$!; storm $a & b=$!; storm $b & storm $a &
echo ready
wait`, stormSeconds)

// TestSigcontStorm: once the storm is on, the run is cancelled; while the
// cleanup runs, the command's accomplices resume every process it stops
// (SIGCONT to the process group) and stop bash and each other. In every
// tier the run still ends within grace + the kill budget + the drain's
// grace (plus 1 s of load) of the cancel, long before the storm would end
// by itself, and nothing of the tree is left (runShellsup's leak check), no
// straggler. The cancel comes when the command says "ready": a timeout
// could fire before a loaded machine has even started the storm.
func TestSigcontStorm(t *testing.T) {
	const grace = 500 * time.Millisecond
	for _, tier := range []struct {
		name string
		args []string
	}{
		{"default", nil},
		{"subreaper", []string{"--no-cgroup"}},
		{"pidns", []string{"--pidns"}},
	} {
		t.Run(tier.name, func(t *testing.T) {
			var cancelled time.Time
			args := append([]string{"--timeout", "60", "--grace", "0.5"}, tier.args...)
			t0 := time.Now()
			r := runShellsup(t, opts{args: args, command: stormCommand, control: true,
				onFrame: onReady(func(r *running) {
					cancelled = time.Now()
					_ = r.send(&protocol.Cancel{})
				})})
			tot := requireTotals(t, r)
			require.False(t, cancelled.IsZero(), "the storm never said ready: %q", tot.Stdout)
			assert.True(t, tot.Cancelled, "the cancel ended the run")
			assert.Empty(t, tot.Cleanup.Stragglers)
			took := t0.Add(r.elapsed).Sub(cancelled)
			bound := grace + killBudgetTest + 500*time.Millisecond + time.Second
			assert.Less(t, took, bound, "the storm (%d s) must not hold the cleanup", stormSeconds)
			t.Logf("%s: returned %v after the cancel, cleanup %d ms, %d signalled, %d killed, %d rounds",
				tier.name, took.Round(time.Millisecond), tot.Cleanup.Ms, tot.Cleanup.Signalled, tot.Cleanup.Killed, tot.Cleanup.Rounds)
		})
	}
}
