package shellsup

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stormSeconds bounds the storm: everything the command starts ends by
// itself after it.
const stormSeconds = 12

// stormCommand: 300 TERM-ignoring sleepers and 4 TERM-ignoring accomplices
// that keep sending SIGCONT to the process group (the whole tree but
// shellsup) and SIGSTOP to bash and each other, for stormSeconds.
var stormCommand = fmt.Sprintf(`trap '' TERM
for i in $(seq 300); do (trap '' TERM; exec sleep %[1]d) & done
storm() {
	trap '' TERM; end=$((SECONDS+%[1]d)); n=0
	while [ $SECONDS -lt $end ] && [ $n -lt 2000000 ]; do
		kill -CONT 0 2>/dev/null; kill -STOP $1 $$ 2>/dev/null; kill -CONT 0 2>/dev/null; n=$((n+1))
	done
}
storm $$ & a=$!; storm $a & b=$!; storm $b & storm $a &
echo ready
wait`, stormSeconds)

// TestSigcontStormRun: Run returns within timeout + grace + the kill budget
// + the drain (plus 1 s of start-up and load) while the command's
// accomplices resume what the cleanup stops, by default (the cgroup tier as
// root) and with PIDNamespace, and nothing of
// the tree is left (newRequest's leak check).
func TestSigcontStormRun(t *testing.T) {
	for _, tier := range []struct {
		name   string
		pidns  bool
		noNS   bool
		expect string
	}{
		{"default", false, false, ""},
		{"pidns", true, false, "pidns"},
	} {
		t.Run(tier.name, func(t *testing.T) {
			req := newRequest(t, stormCommand)
			req.Timeout, req.Grace = time.Second, new(500*time.Millisecond)
			req.PIDNamespace, req.NoPIDNamespace = tier.pidns, tier.noNS
			t0 := time.Now()
			res, err := Run(context.Background(), req)
			took := time.Since(t0)
			require.NoError(t, err)
			assert.Contains(t, res.Stdout, "ready")
			assert.True(t, res.TimedOut)
			assert.Empty(t, res.Cleanup.Stragglers)
			if tier.expect != "" {
				assert.Contains(t, res.Cleanup.Tier, tier.expect)
			}
			bound := time.Second + 500*time.Millisecond + 3*time.Second + 500*time.Millisecond + time.Second
			assert.Less(t, took, bound, "the storm (%d s) must not hold Run", stormSeconds)
			t.Logf("%s (%s): Run returned after %v, cleanup %v", tier.name, res.Cleanup.Tier, took.Round(time.Millisecond), res.Cleanup.Duration)
		})
	}
}
