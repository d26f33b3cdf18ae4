package shellsup

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
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

// TestSigcontStormRun: once the storm is on (the command says "ready"), the
// context is cancelled; Run returns within grace + the kill budget + the
// drain (plus 1 s of load) of the cancel while the command's accomplices
// resume what the cleanup stops, by default (the cgroup tier as root) and
// with PIDNamespace, and nothing of the tree is left (newRequest's leak
// check).
func TestSigcontStormRun(t *testing.T) {
	for _, tier := range []struct {
		name   string
		pidns  bool
		expect string
	}{
		{"default", false, ""},
		{"pidns", true, "pidns"},
	} {
		t.Run(tier.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var at atomic.Int64 // when "ready" came and the context was cancelled, UnixNano
			req := newRequest(t, stormCommand)
			req.Timeout, req.Grace = time.Minute, new(500*time.Millisecond)
			req.PIDNamespace = tier.pidns
			req.Progress = func(stream, text string) error {
				if strings.Contains(text, "ready") && at.CompareAndSwap(0, time.Now().UnixNano()) {
					cancel()
				}
				return nil
			}
			res, err := Run(ctx, req)
			took := time.Since(time.Unix(0, at.Load()))
			require.NoError(t, err)
			require.NotZero(t, at.Load(), "the storm never said ready: %q", res.Stdout)
			assert.True(t, res.Cancelled)
			assert.Empty(t, res.Cleanup.Stragglers)
			if tier.expect != "" {
				assert.Contains(t, res.Cleanup.Tier, tier.expect)
			}
			bound := 500*time.Millisecond + 3*time.Second + 500*time.Millisecond + time.Second
			assert.Less(t, took, bound, "the storm (%d s) must not hold Run", stormSeconds)
			t.Logf("%s (%s): Run returned %v after the cancel, cleanup %v", tier.name, res.Cleanup.Tier, took.Round(time.Millisecond), res.Cleanup.Duration)
		})
	}
}
