package shellsup

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/reaper/reapertest"
)

func init() {
	helpers.Register("jobs-harness", jobsHarness)
}

// harnessJobs are the jobs of jobsHarness: a setsid daemon, a TERM-ignorer,
// and background children of bash.
var harnessJobs = []string{
	`setsid sleep 300 & echo ready; sleep 300`,
	`trap '' TERM; (exec sleep 300) & echo ready; wait`,
	`sleep 300 & sleep 300 & echo ready; wait`,
}

// jobsHarness is a Go harness with three live jobs, their spill
// directories under args[0]: it says "ready (pid: N)" once every job has
// said "ready", and then waits to be SIGKILLed.
func jobsHarness(args []string) int {
	ctx, cancel := context.WithTimeout(context.Background(), jobWait)
	defer cancel()
	for i, cmd := range harnessJobs {
		j, err := Start(context.Background(), Request{Command: cmd, Spill: args[0], Grace: new(500 * time.Millisecond)})
		if err != nil {
			fmt.Printf("job %d: %v\n", i, err)
			return 1
		}
		if err := j.WaitFor(ctx, Ready{Pattern: regexp.MustCompile(`ready`)}); err != nil {
			fmt.Printf("job %d: %v\n", i, err)
			return 1
		}
	}
	fmt.Printf("ready (pid: %d)\n", os.Getpid())
	<-ctx.Done() // the test SIGKILLs it long before; proctest's lifetime backs this up
	return 1
}

// TestJobsDieWithTheirOwner: a Go harness with three live jobs — one a
// setsid daemon, one ignoring SIGTERM — is SIGKILLed. Each job's shellsup
// sees its control pipe reach EOF (and the parent-death signal) and cleans
// up: nothing of any job is left.
func TestJobsDieWithTheirOwner(t *testing.T) {
	tok := reapertest.NewToken()
	t.Cleanup(func() { reapertest.Check(t, tok) })
	harness := helpers.Command("jobs-harness", t.TempDir())
	harness.Env = append(harness.Env, tok.Env())
	harness.Stderr = os.Stderr
	stdout, err := harness.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, harness.Start())
	t.Cleanup(func() {
		_ = harness.Process.Kill() // gone already, normally
		_ = harness.Wait()
	})
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout) // the helper's own lines
		for sc.Scan() {
			lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	awaitLine(t, lines, "ready (pid: ", jobWait)
	alive := reapertest.Find(tok, harness.Process.Pid)
	require.GreaterOrEqual(t, len(alive), 3*3, "three shellsups, their bashes and sleeps: %v", procStrings(alive))

	require.NoError(t, harness.Process.Kill())
	_ = harness.Wait() // "signal: killed"
	took := awaitNoLeak(t, tok, 15*time.Second)
	t.Logf("every job was gone %v after the harness died", took)
}
