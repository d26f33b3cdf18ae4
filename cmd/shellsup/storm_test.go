//go:build linux

package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// TestSigcontStorm: while the cleanup runs, the command's accomplices
// resume every process it stops (SIGCONT to the process group) and stop
// bash and each other. In every tier the run still ends within timeout +
// grace + the kill budget + the drain's grace (plus 1 s of start-up and
// load), long before the storm would end by itself, and nothing of the
// tree is left (runShellsup's leak check), no straggler.
func TestSigcontStorm(t *testing.T) {
	const timeout, grace = time.Second, 500 * time.Millisecond
	for _, tier := range []struct {
		name string
		args []string
	}{
		{"default", nil},
		{"subreaper", []string{"--no-cgroup"}},
		{"pidns", []string{"--pidns"}},
	} {
		t.Run(tier.name, func(t *testing.T) {
			args := append([]string{"--timeout", "1", "--grace", "0.5"}, tier.args...)
			r := runShellsup(t, opts{args: args, command: stormCommand})
			tot := requireTotals(t, r)
			require.Contains(t, tot.Stdout, "ready")
			assert.True(t, tot.TimedOut, "the timeout ended the run")
			assert.Empty(t, tot.Cleanup.Stragglers)
			bound := timeout + grace + killBudgetTest + 500*time.Millisecond + time.Second
			assert.Less(t, r.elapsed, bound, "the storm (%d s) must not hold the cleanup", stormSeconds)
			assert.Less(t, r.elapsed, stormSeconds*time.Second)
			t.Logf("%s: returned after %v, cleanup %d ms, %d signalled, %d killed, %d rounds",
				tier.name, r.elapsed.Round(time.Millisecond), tot.Cleanup.Ms, tot.Cleanup.Signalled, tot.Cleanup.Killed, tot.Cleanup.Rounds)
		})
	}
}
