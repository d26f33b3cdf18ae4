//go:build linux

package main

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// The command of the parent-path tests: a setsid daemon, a background job
// holding stdout, and a foreground loop that keeps printing.
const busyCommand = "setsid sleep 300 & sleep 300 & echo ready; while :; do echo tick; sleep 0.05; done"

func TestParentClosesStdin(t *testing.T) {
	r := runShellsup(t, opts{
		command: busyCommand, control: true,
		onFrame: onReady(func(r *running) { r.closeStdin() }),
	})
	tot := requireTotals(t, r)
	assert.True(t, tot.Cancelled)
	assert.Equal(t, protocol.ReasonParentGone, tot.CancelReason)
	assert.Equal(t, 130, r.exit)
}

func TestSignalsToShellsupCancel(t *testing.T) {
	// A cancel by signal N exits 128+N, as shells and timeout(1) do.
	for sig, code := range map[syscall.Signal]int{syscall.SIGTERM: 143, syscall.SIGINT: 130, syscall.SIGHUP: 129} {
		t.Run(sig.String(), func(t *testing.T) {
			r := runShellsup(t, opts{
				command: busyCommand, control: true,
				onFrame: onReady(func(r *running) { r.signal(sig) }),
			})
			tot := requireTotals(t, r)
			assert.True(t, tot.Cancelled)
			assert.Equal(t, protocol.ReasonSignal, tot.CancelReason)
			assert.Equal(t, code, r.exit)
		})
	}
}

// TestParentClosesStdout: the parent stops reading frames. shellsup must
// not die of SIGPIPE: the failed write cancels the run, it cleans up, and
// exits 130.
func TestParentClosesStdout(t *testing.T) {
	tok := reapertest.NewToken()
	cmd := exec.Command(shellsupBin, "--frames", "--", busyCommand)
	cmd.Env = baseEnv(tok)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	dec := protocol.NewDecoder(out)
	for seen := ""; !strings.Contains(seen, "ready"); {
		var f protocol.Frame
		require.NoError(t, dec.Decode(&f))
		if p, ok := f.(*protocol.Progress); ok {
			seen += p.Text
		}
	}
	out.Close() // the read end: shellsup's next write gets EPIPE
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	ws := ee.Sys().(syscall.WaitStatus)
	require.False(t, ws.Signaled(), "shellsup died of %v", ws.Signal())
	assert.Equal(t, 130, ws.ExitStatus())
	reapertest.Check(t, tok)
}

// TestParentKilled: the harness that runs shellsup is SIGKILLed. shellsup
// learns it from the end of its control channel and removes the whole tree
// within a couple of seconds.
func TestParentKilled(t *testing.T) {
	tok := reapertest.NewToken()
	parent := helpers.Command("parent", "--frames", "--", busyCommand)
	parent.Env = append(baseEnv(tok), helpers.Env("parent"), "SHELLSUP_TEST_BIN="+shellsupBin)
	out, err := parent.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, parent.Start())
	line, err := readLine(bufio.NewReader(out), 10*time.Second)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "ready ")))
	require.NoError(t, err, "helper said %q", line)
	require.NotEmpty(t, reapertest.Find(tok, parent.Process.Pid), "the tree should be running")

	require.NoError(t, parent.Process.Kill())
	_ = parent.Wait() // killed: the status says so
	proctest.Await(5*time.Second, func() bool {
		reapertest.ReapOrphans() // shellsup itself, reparented to the test when the harness died
		return len(reapertest.Find(tok)) == 0
	})
	reapertest.Check(t, tok) // fails the test, with the list, if the deadline passed
	_, err = os.Stat("/proc/" + strconv.Itoa(pid))
	assert.True(t, os.IsNotExist(err), "shellsup %d is still there", pid)
}

// TestParentKilledTermIgnorer: with the owner gone nobody waits for a
// graceful end. A TERM-ignoring daemon under --grace 5 is gone well before
// the grace would have ended (issue: it lived the whole grace).
func TestParentKilledTermIgnorer(t *testing.T) {
	tok := reapertest.NewToken()
	command := "setsid bash -c 'trap \"\" TERM; while :; do sleep 0.1; done' & " + busyCommand
	parent := helpers.Command("parent", "--frames", "--grace", "5", "--", command)
	parent.Env = append(baseEnv(tok), helpers.Env("parent"), "SHELLSUP_TEST_BIN="+shellsupBin)
	out, err := parent.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, parent.Start())
	_, err = readLine(bufio.NewReader(out), 10*time.Second)
	require.NoError(t, err)
	require.NotEmpty(t, reapertest.Find(tok, parent.Process.Pid), "the tree should be running")

	require.NoError(t, parent.Process.Kill())
	_ = parent.Wait() // killed: the status says so
	// Half the grace: a cleanup that waited for the grace would still run.
	gone := proctest.Await(2500*time.Millisecond, func() bool {
		reapertest.ReapOrphans()
		return len(reapertest.Find(tok)) == 0
	})
	assert.True(t, gone, "the TERM-ignorer outlived half the grace after its owner died: %v", reapertest.Find(tok))
	proctest.Await(10*time.Second, func() bool { reapertest.ReapOrphans(); return len(reapertest.Find(tok)) == 0 })
	reapertest.Check(t, tok)
}
