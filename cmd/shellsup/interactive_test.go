//go:build linux

package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/protocol"
)

// Interactive runs (docs/interactive.md) through the binary: --pty,
// --stdin pipe, input frames, --idle-timeout, --stop-on-input.

// TestPTYShapes: every fast leak shape, set up by bash on a terminal, is
// cleaned up whether bash exits, the timeout fires or a cancel comes.
func TestPTYShapes(t *testing.T) {
	for _, s := range shapes(t) {
		if s.slow {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			t.Run("exit", func(t *testing.T) {
				r := runShellsup(t, opts{args: []string{"--pty", "--grace", "0.5"}, command: s.setup + "\necho ready; exit 7"})
				tot := requireTotals(t, r)
				assert.Equal(t, 7, *tot.ExitCode)
				assert.Contains(t, tot.Stdout, "ready")
				assertPrompt(t, tot, 500*time.Millisecond)
			})
			t.Run("timeout", func(t *testing.T) {
				r := runShellsup(t, opts{args: []string{"--pty", "--timeout", "1.5", "--grace", "0.5"}, command: s.setup + "\necho ready; sleep 300"})
				tot := requireTotals(t, r)
				assert.True(t, tot.TimedOut)
				assert.Contains(t, tot.Stdout, "ready", "the shape was not set up before the timeout")
				assertPrompt(t, tot, 500*time.Millisecond)
			})
			t.Run("cancel", func(t *testing.T) {
				r := runShellsup(t, opts{
					args: []string{"--pty", "--grace", "0.5"}, command: s.setup + "\necho ready; sleep 300", control: true,
					onFrame: onReady(func(r *running) { require.NoError(t, r.send(&protocol.Cancel{})) }),
				})
				tot := requireTotals(t, r)
				assert.True(t, tot.Cancelled)
				assertPrompt(t, tot, 500*time.Millisecond)
			})
		})
	}
}

// TestPTYTerminal: bash's stdin, stdout and stderr are one terminal, its
// controlling terminal, in a session of its own; TERM is set; ls colours
// and top runs as on a terminal; stderr is merged into stdout.
func TestPTYTerminal(t *testing.T) {
	cmd := `test -t 0 && test -t 1 && test -t 2 && echo on-a-tty; echo "term=$TERM"; ` +
		`exec 3</dev/tty && echo ctty-ok; stty size; ` +
		`d=$(mktemp -d); mkdir $d/sub; ls --color=auto $d; rm -r $d; ` +
		`top -b -n 1 | head -1; echo to-stderr >&2`
	unsetTerm(t)
	r := runShellsup(t, opts{args: []string{"--pty", "--pty-size", "100x30", "--no-login"}, command: cmd})
	tot := requireTotals(t, r)
	out := tot.Stdout
	assert.Contains(t, out, "on-a-tty")
	assert.Contains(t, out, "term=xterm-256color")
	assert.Contains(t, out, "ctty-ok")
	assert.Contains(t, out, "30 100")
	assert.Contains(t, out, "\x1b[", "ls --color=auto printed no colour on the terminal")
	assert.Contains(t, out, "top -")
	assert.Contains(t, out, "to-stderr")
	assert.Empty(t, tot.Stderr)
	assert.Contains(t, out, "\r\n", "the terminal's line discipline turns \\n into \\r\\n")
	r = runShellsup(t, opts{args: []string{"--pty", "--no-login"}, command: `echo "term=$TERM"`, env: []string{"TERM=vt100"}})
	assert.Contains(t, requireTotals(t, r).Stdout, "term=vt100", "a TERM of the environment is kept")
}

// TestPTYTermDefault: without TERM in the environment, xterm-256color.
func TestPTYTermDefault(t *testing.T) {
	unsetTerm(t)
	r := runShellsup(t, opts{args: []string{"--pty", "--no-login"}, command: `echo "term=$TERM"`})
	assert.Contains(t, requireTotals(t, r).Stdout, "term=xterm-256color")
}

// unsetTerm runs the test without TERM in the environment.
func unsetTerm(t *testing.T) {
	t.Setenv("TERM", "") // restored after the test
	require.NoError(t, os.Unsetenv("TERM"))
}

// TestNoPTYDevTTYFailsFast: without --pty the command has no controlling
// terminal, so opening /dev/tty fails at once instead of waiting.
func TestNoPTYDevTTYFailsFast(t *testing.T) {
	r := runShellsup(t, opts{args: []string{"--no-login"}, command: `exec 3</dev/tty || exit 9; echo opened`})
	tot := requireTotals(t, r)
	assert.Equal(t, 9, *tot.ExitCode)
	assert.Contains(t, tot.Stderr, "/dev/tty: No such device or address")
	assert.NotContains(t, tot.Stdout, "opened")
	assert.Less(t, r.elapsed, 10*time.Second)
}

// TestPTYPidns: on a terminal under --pidns, bash has it as its
// controlling terminal, input reaches it, and the run ends (the init's
// copy of the terminal is gone, so the master reports the end).
func TestPTYPidns(t *testing.T) {
	r := runShellsup(t, opts{
		args: []string{"--pty", "--pidns", "--no-login"}, command: `exec 3</dev/tty && echo ready; read -r line; echo "got=$line"; (setsid sleep 300 &)`,
		control: true,
		onFrame: onReady(func(r *running) { require.NoError(t, r.send(&protocol.Input{Data: []byte("hello\n")})) }),
	})
	if r.errf != nil && r.errf.Category == protocol.CategoryContainmentUnavailable {
		t.Skipf("no PID namespace here: %s", r.errf.Message)
	}
	tot := requireTotals(t, r)
	assert.Contains(t, tot.Stdout, "got=hello")
	assert.Equal(t, 0, *tot.ExitCode)
}

// TestStdinPipeInputAndEOF: --stdin pipe feeds cat; eof closes the pipe.
func TestStdinPipeInputAndEOF(t *testing.T) {
	r := runShellsup(t, opts{
		args: []string{"--stdin", "pipe", "--no-login"}, command: `echo ready; cat; echo "cat-done"`, control: true,
		onFrame: onReady(func(r *running) {
			require.NoError(t, r.send(&protocol.Input{Data: []byte("line one\n")}))
			require.NoError(t, r.send(&protocol.EOF{}))
		}),
	})
	tot := requireTotals(t, r)
	assert.Contains(t, tot.Stdout, "line one\ncat-done")
}

// TestSignalFrameWithoutPTY: a signal frame reaches bash's process group.
func TestSignalFrameWithoutPTY(t *testing.T) {
	r := runShellsup(t, opts{
		args: []string{"--stdin", "pipe", "--no-login"}, command: `trap 'echo got-int; exit 9' INT; echo ready; while :; do sleep 0.05; done`, control: true,
		onFrame: onReady(func(r *running) { require.NoError(t, r.send(&protocol.Signal{Signal: "INT"})) }),
	})
	tot := requireTotals(t, r)
	assert.Contains(t, tot.Stdout, "got-int")
	assert.Equal(t, 9, *tot.ExitCode)
}

// TestPTYResize: a resize frame changes the size and the program gets
// SIGWINCH.
func TestPTYResize(t *testing.T) {
	r := runShellsup(t, opts{
		args: []string{"--pty", "--no-login"}, command: `trap 'stty size; exit 0' WINCH; echo ready; while :; do sleep 0.05; done`, control: true,
		onFrame: onReady(func(r *running) { require.NoError(t, r.send(&protocol.Resize{Cols: 132, Rows: 50})) }),
	})
	assert.Contains(t, requireTotals(t, r).Stdout, "50 132")
}

// TestIdleTimeout: nothing printed for the idle timeout ends the run
// with status idle (exit 124), not timedOut; output keeps it alive.
func TestIdleTimeout(t *testing.T) {
	r := runShellsup(t, opts{args: []string{"--idle-timeout", "0.4", "--no-login"}, command: `for i in 1 2 3 4 5; do echo tick; sleep 0.1; done; tail -f /dev/null`})
	tot := requireTotals(t, r)
	assert.Equal(t, 124, r.exit)
	assert.True(t, tot.Idle)
	assert.False(t, tot.TimedOut)
	assert.Equal(t, protocol.StatusIdle, tot.Status)
	assert.Equal(t, protocol.TriggerIdle, tot.Cleanup.Trigger)
	assert.Equal(t, 5, strings.Count(tot.Stdout, "tick"))
	assert.Contains(t, r.frameTypes(), protocol.TypeIdle)
	assert.Less(t, r.elapsed, 10*time.Second)
}

// TestStopOnInput: a password prompt on the terminal ends the run within
// a second of its printing, with needs_input and the prompt.
func TestStopOnInput(t *testing.T) {
	r := runShellsup(t, opts{args: []string{"--pty", "--stop-on-input", "--no-login"}, command: `bash -c 'read -s -p Password: p'`})
	tot := requireTotals(t, r)
	assert.Equal(t, 124, r.exit)
	assert.True(t, tot.NeedsInput)
	assert.Equal(t, protocol.StatusNeedsInput, tot.Status)
	assert.Equal(t, "Password:", tot.Prompt)
	assert.Less(t, r.elapsed, 5*time.Second)
	// getpass reads /dev/tty (another device number than the terminal's
	// slave); python3 -i waits in pselect6.
	for cmd, prompt := range map[string]string{
		`/usr/bin/python3 -c 'import getpass; getpass.getpass("Secret: ")'`: "Secret: ",
		`/usr/bin/python3 -i -q`: ">>> ",
	} {
		r = runShellsup(t, opts{args: []string{"--pty", "--stop-on-input", "--no-login", "--timeout", "20"}, command: cmd})
		tot = requireTotals(t, r)
		assert.True(t, tot.NeedsInput, "%s: %q", cmd, tot.Stdout)
		assert.Equal(t, prompt, tot.Prompt, cmd)
	}
	// A busy program, or one sleeping, is not waiting for input.
	r = runShellsup(t, opts{args: []string{"--pty", "--stop-on-input", "--timeout", "1.5", "--no-login"}, command: `sleep 5`})
	tot = requireTotals(t, r)
	assert.True(t, tot.TimedOut)
	assert.False(t, tot.NeedsInput)
}

// TestInteractiveFlagErrors: bad values are refused, quoted, before anything runs.
func TestInteractiveFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--pty-size", "80x24"}, `--pty-size "80x24" needs --pty`},
		{[]string{"--pty", "--pty-size", "0x5"}, `pty-size must be COLSxROWS`},
		{[]string{"--stdin", "tty"}, `stdin must be "null" or "pipe" (got "tty")`},
		{[]string{"--pty", "--stdin", "pipe"}, `exclude each other`},
		{[]string{"--idle-timeout", "-1"}, `idle-timeout must be greater than 0`},
		{[]string{"--stop-on-input"}, `--stop-on-input needs --pty`},
	} {
		r := runShellsup(t, opts{args: c.args, command: "echo should-not-run"})
		require.NotNil(t, r.errf, "%v: no error frame", c.args)
		assert.Equal(t, protocol.CategoryValidation, r.errf.Category)
		assert.Contains(t, r.errf.Message, c.want)
	}
}

// TestCancelBehindUnreadInput: input the command never reads waits in
// shellsup's queue; a cancel sent after it is read at once, and a taken
// frame says what was written.
func TestCancelBehindUnreadInput(t *testing.T) {
	var sentAt time.Time
	r := runShellsup(t, opts{
		args: []string{"--stdin", "pipe", "--no-login", "--grace", "0.5"}, command: `echo ready; sleep 300`, control: true,
		onFrame: onReady(func(r *running) {
			for range 3 {
				require.NoError(t, r.send(&protocol.Input{Data: make([]byte, 512<<10)}))
			}
			sentAt = time.Now()
			require.NoError(t, r.send(&protocol.Cancel{}))
		}),
	})
	tot := requireTotals(t, r)
	assert.True(t, tot.Cancelled)
	assert.Equal(t, protocol.ReasonRequest, tot.CancelReason)
	assert.Less(t, time.Since(sentAt), 5*time.Second)
}

// TestPTYAsNobody: unprivileged, a terminal is opened and made bash's, and
// the waiting check reads the tree's /proc files (same uid): needs_input
// with the prompt, in the default tier and under --pidns (a user namespace).
func TestPTYAsNobody(t *testing.T) {
	bin, dir := unprivileged(t)
	for _, tier := range [][]string{nil, {"--pidns"}} {
		args := append(append([]string{"--pty", "--stop-on-input", "--no-login"}, tier...), "--", "id -un; exec 3</dev/tty || exit 9; read -p 'Name? ' n")
		out, code := asNobody(t, bin, dir, args...)
		if strings.Contains(out, "containment_unavailable") || strings.Contains(out, "PID namespace") && code == 125 {
			t.Logf("%v: no PID namespace for nobody here: %s", tier, out)
			continue
		}
		assert.Equal(t, 124, code, "%v: %s", tier, out)
		assert.Contains(t, out, "nobody", "%v", tier)
		assert.Contains(t, out, "waits for input", "%v: %s", tier, out)
		assert.Contains(t, out, "needs input", "%v: %s", tier, out)
	}
}
