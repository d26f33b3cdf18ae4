//go:build linux

package main

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// killBudgetTest is the reaper's kill budget after the grace (the README's
// "grace + 3 s"), and landing the time the last kills get to land.
const (
	killBudgetTest = 3 * time.Second
	landingTest    = 100 * time.Millisecond
)

// TestAccomplices: two TERM-ignoring accomplices each SIGCONT the other and
// fork a TERM-ignoring sleeper per turn (at most 400 turns each, so at most
// 800 sleepers, each with a 30 s self-destruct), while a third process
// floods shellsup with signals (SIGTERM first: it cancels the run, then
// SIGWINCH, SIGCONT, SIGHUP, SIGTERM, 2000 turns). Whatever the
// accomplices resume after SIGSTOP is stopped or killed again: nothing is
// left, no straggler, and the cleanup ends within grace + kill budget +
// 100 ms.
func TestAccomplices(t *testing.T) {
	if proctest.Tier() == "pidns" {
		t.Skip("the flood targets $PPID, which inside a PID namespace is the init, not shellsup (TestPidnsAttacksReachOnlyTheInit covers that)")
	}
	dir := t.TempDir()
	command := fmt.Sprintf(`trap '' TERM HUP; cd %s
accomplice() {
	trap '' TERM HUP; echo $BASHPID > $1.tmp; mv $1.tmp $1
	while [ ! -s $2 ]; do sleep 0.01; done; read o < $2; n=0
	while [ $n -lt 400 ]; do kill -CONT $o 2>/dev/null; (trap '' TERM HUP; exec sleep 30) & kill -CONT $!; n=$((n+1)); done
	wait
}
accomplice a b & accomplice b a &
while [ ! -s a ] || [ ! -s b ]; do sleep 0.01; done
echo ready
for i in $(seq 2000); do kill -TERM $PPID; kill -WINCH $PPID; kill -CONT $PPID; kill -HUP $PPID; done
wait`, dir)
	grace := 300 * time.Millisecond
	r := runShellsup(t, opts{args: []string{"--grace", "0.3"}, command: command})
	tot := requireTotals(t, r)
	assert.Contains(t, tot.Stdout, "ready")
	assert.True(t, tot.Cancelled, "the flood's first SIGTERM cancels")
	assert.Empty(t, tot.Cleanup.Stragglers)
	took := time.Duration(tot.Cleanup.Ms) * time.Millisecond
	assert.LessOrEqual(t, took, grace+killBudgetTest+landingTest, "cleanup %v", took)
	t.Logf("cleanup %v: %d signalled, %d killed, %d rounds", took, tot.Cleanup.Signalled, tot.Cleanup.Killed, tot.Cleanup.Rounds)
}

// TestTimeoutExitTie: `sleep 0.9NN` under --timeout 1, 200 runs, 8 at a
// time. An exit that happened before the timer fired wins, reaped or not.
// The test knows the deadline is no earlier than one second after it
// started shellsup, and the command prints $EPOCHREALTIME just before it
// exits: a run whose exit provably preceded the deadline (by 50 ms, for the
// exit itself) must not be reported timed out.
func TestTimeoutExitTie(t *testing.T) {
	if testing.Short() {
		t.Skip("200 runs")
	}
	const runs, parallel = 200, 8
	var mu sync.Mutex
	determinate, timedOut := 0, 0
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallel)
	for i := range runs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			sleep := fmt.Sprintf("0.%03d", 900+i%100)
			t0 := time.Now()
			r := runShellsup(t, opts{args: []string{"--timeout", "1", "--grace", "0.5"}, command: "sleep " + sleep + "; echo $EPOCHREALTIME",
				noLeakCheck: true}) // the runs overlap: one check at the end sees any leak (orphans of the test)
			tot := r.totals
			if !assert.NotNil(t, tot, "run %d: frames %v, stderr %q", i, r.frameTypes(), r.stderr) {
				return
			}
			ended, ok := epoch(tot.Stdout)
			mu.Lock()
			defer mu.Unlock()
			if tot.TimedOut {
				timedOut++
			}
			if !ok || !ended.Add(exitAfterEcho).Before(t0.Add(time.Second)) {
				return // the exit may have come after the deadline
			}
			determinate++
			assert.False(t, tot.TimedOut, "run %d (sleep %s): exited %v after the start, before the deadline, reported timed out (exit code %v)",
				i, sleep, ended.Sub(t0), tot.ExitCode)
		}()
	}
	wg.Wait()
	reapertest.Check(t, reapertest.NewToken())
	t.Logf("%d runs: %d exited provably before the deadline, %d timed out", runs, determinate, timedOut)
}

// exitAfterEcho bounds the time from the command's last echo to its exit:
// the exit itself, and being put off the CPU in between on a loaded
// machine (2 ms was not always enough under `go test ./...` on two CPUs,
// nor 15 ms under `make stress` beside other work: a run that echoed 18 ms
// before the deadline was, rightly, timed out).
const exitAfterEcho = 50 * time.Millisecond

// epoch parses the $EPOCHREALTIME a command printed last.
func epoch(stdout string) (time.Time, bool) {
	fields := strings.Fields(stdout)
	if len(fields) == 0 {
		return time.Time{}, false
	}
	sec, frac, ok := strings.Cut(fields[len(fields)-1], ".")
	s, err1 := strconv.ParseInt(sec, 10, 64)
	us, err2 := strconv.ParseInt(frac, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return time.Time{}, false
	}
	return time.Unix(s, us*1000), true
}
