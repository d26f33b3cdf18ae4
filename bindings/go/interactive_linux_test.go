package shellsup

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func expectWithin(t *testing.T, j *Job, re string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), jobWait)
	defer cancel()
	m, err := j.Expect(ctx, regexp.MustCompile(re))
	require.NoError(t, err)
	return m
}

// TestJobPTYPython drives python3 -i on a terminal: Write, Expect, exit.
func TestJobPTYPython(t *testing.T) {
	needPython(t)
	req := newRequest(t, python+" -i -q")
	req.PTY, req.NoLogin = true, true
	j := startJob(t, req)
	expectWithin(t, j, `>>> `)
	require.NoError(t, j.Write(context.Background(), []byte("print(6*7)\n")))
	m := expectWithin(t, j, `(\d+)\r\n`)
	assert.Equal(t, "42", m[1])
	require.NoError(t, j.Write(context.Background(), []byte("exit()\n")))
	ctx, cancel := context.WithTimeout(context.Background(), jobWait)
	defer cancel()
	res, err := j.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitCode)
}

// TestJobPTYWaitingAndSignal: Waiting says a read -p waits, with its
// prompt; SignalGroup("INT") stops a foreground sleep of an interactive
// bash, which goes on; Expect on an ended job fails at once.
func TestJobPTYWaitingAndSignal(t *testing.T) {
	req := newRequest(t, `exec bash --rcfile <(echo "PS1='PROMPT$ '") -i`)
	req.PTY, req.NoLogin = true, true
	j := startJob(t, req)
	expectWithin(t, j, `PROMPT\$ `)
	require.NoError(t, j.Write(context.Background(), []byte("read -p 'Name? ' n; echo hello $n\n")))
	expectWithin(t, j, `Name\? `)
	deadline := time.Now().Add(5 * time.Second)
	waiting, prompt := j.Waiting()
	for !waiting && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		waiting, prompt = j.Waiting()
	}
	require.True(t, waiting, "no waiting frame for read -p")
	assert.Equal(t, "Name? ", prompt)
	require.NoError(t, j.Write(context.Background(), []byte("bob\n")))
	w, _ := j.Waiting()
	assert.False(t, w, "input was written: no longer waiting")
	expectWithin(t, j, `hello bob`)
	require.NoError(t, j.Write(context.Background(), []byte("sleep 100; echo after=$?\n")))
	time.Sleep(200 * time.Millisecond) // let sleep start; the check below does not depend on it
	start := time.Now()
	require.NoError(t, j.SignalGroup(context.Background(), "INT"))
	expectWithin(t, j, `PROMPT\$ `)
	assert.Less(t, time.Since(start), 10*time.Second)
	require.NoError(t, j.Write(context.Background(), []byte("echo still-here\n")))
	expectWithin(t, j, `still-here\r\n`)
	require.NoError(t, j.Write(context.Background(), []byte("exit 3\n")))
	ctx, cancel := context.WithTimeout(context.Background(), jobWait)
	defer cancel()
	_, err := j.Expect(ctx, regexp.MustCompile(`never printed`))
	require.ErrorIs(t, err, ErrJobEnded)
	res, err := j.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, res.ExitCode)
}

// TestRunPTYNeedsInput: a Run on a terminal whose program asks for a
// password ends at once with needs_input and the prompt, cleaned up.
func TestRunPTYNeedsInput(t *testing.T) {
	req := newRequest(t, "bash -c 'read -s -p Password: p'")
	req.PTY, req.NoLogin = true, true
	start := time.Now()
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.Equal(t, "needs_input", res.Status)
	assert.True(t, res.NeedsInput)
	assert.Equal(t, "Password:", res.Prompt)
	assert.False(t, res.TimedOut)
	assert.True(t, res.Cleanup.Clean())
}

// TestRunIdleTimeout: tail -f prints once, then nothing: the idle timeout
// ends it, not the timeout.
func TestRunIdleTimeout(t *testing.T) {
	req := newRequest(t, "echo started; tail -f /dev/null")
	req.IdleTimeout, req.NoLogin = 300*time.Millisecond, true
	start := time.Now()
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Equal(t, "idle", res.Status)
	assert.True(t, res.Idle)
	assert.False(t, res.TimedOut)
	assert.Equal(t, "idle", res.Cleanup.Trigger)
}

// TestJobStdinPipe: Stdin gives cat a pipe; SendEOF ends it.
func TestJobStdinPipe(t *testing.T) {
	req := newRequest(t, "cat; echo done-reading")
	req.Stdin, req.NoLogin = true, true
	j := startJob(t, req)
	require.NoError(t, j.Write(context.Background(), []byte("one\ntwo\n")))
	expectWithin(t, j, `two\n`)
	require.NoError(t, j.SendEOF(context.Background()))
	expectWithin(t, j, `done-reading`)
	_, err := Start(context.Background(), Request{Command: "true", Interactive: Interactive{PTY: true, Stdin: true}})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "exclude each other"), err.Error())
}

// TestJobKillWhileInputWaits: a program that reads nothing holds Write,
// yet Kill is seen at once (Write keeps what is in flight small) and Write
// returns.
func TestJobKillWhileInputWaits(t *testing.T) {
	req := newRequest(t, "echo ready; sleep 300")
	req.Stdin, req.NoLogin = true, true
	j := startJob(t, req)
	expectWithin(t, j, `ready`)
	wrote := make(chan error, 1)
	go func() { wrote <- j.Write(context.Background(), make([]byte, 8<<20)) }()
	time.Sleep(300 * time.Millisecond) // let Write fill the pipe; the test's checks do not depend on it
	start := time.Now()
	res, err := j.Kill(time.Second)
	require.NoError(t, err)
	assert.True(t, res.Cancelled)
	assert.Equal(t, "request", res.CancelReason)
	assert.Less(t, time.Since(start), 5*time.Second)
	select {
	case err := <-wrote:
		require.NoError(t, err)
	case <-time.After(jobWait):
		t.Fatal("Write did not return after the job ended")
	}
}

// TestRunRefusesStdin: Run cannot write input, so a stdin pipe would only
// make a reader wait for its timeout.
func TestRunRefusesStdin(t *testing.T) {
	_, err := Run(context.Background(), Request{Command: "cat", Interactive: Interactive{Stdin: true}})
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, CategoryValidation, e.Category)
	assert.Contains(t, err.Error(), "Stdin needs a job")
}
