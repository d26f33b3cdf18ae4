//go:build linux

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// runHostile runs shellsup through the exec-shellsup helper: started with
// SIGINT, SIGHUP and SIGPIPE ignored, six signals blocked, and three extra
// fds without close-on-exec on a file named "canary". It returns the
// command's stdout.
func runHostile(t *testing.T, command string) string {
	t.Helper()
	tok := reapertest.NewToken()
	cmd := helpers.Command("exec-shellsup", "--frames", "--", command)
	cmd.Env = append(baseEnv(tok), helpers.Env("exec-shellsup"), "SHELLSUP_TEST_BIN="+shellsupBin,
		"SHELLSUP_TEST_CANARY="+filepath.Join(t.TempDir(), "canary"))
	raw, err := cmd.Output()
	require.NoError(t, err)
	reapertest.Check(t, tok)
	var out strings.Builder
	dec := protocol.NewDecoder(strings.NewReader(string(raw)))
	for {
		var f protocol.Frame
		if dec.Decode(&f) != nil {
			break
		}
		if tot, ok := f.(*protocol.Totals); ok {
			out.WriteString(tot.Stdout)
		}
	}
	return out.String()
}

func TestOnlyStdioReachesTheCommand(t *testing.T) {
	// shellsup ($PPID) really inherited the canary fds; bash ($$) has only
	// 0, 1 and 2.
	out := runHostile(t, "ls -l /proc/$PPID/fd; echo BASH; ls -l /proc/$$/fd; true")
	shellsupFds, bashFds, ok := strings.Cut(out, "BASH")
	require.True(t, ok, out)
	if proctest.Tier() != "pidns" { // there $PPID is the namespace's init
		assert.Equal(t, 3, strings.Count(shellsupFds, "canary"), "the harness should have passed 3 canary fds:\n%s", shellsupFds)
	}
	assert.NotContains(t, bashFds, "canary")
	assert.Equal(t, []string{"0", "1", "2"}, fdNumbers(bashFds))
}

// fdNumbers picks the fd numbers out of `ls -l /proc/PID/fd`.
func fdNumbers(ls string) []string {
	var out []string
	for _, line := range strings.Split(ls, "\n") {
		if f := strings.Fields(line); len(f) > 9 && f[len(f)-2] == "->" {
			out = append(out, f[len(f)-3])
		}
	}
	return out
}

func TestSignalStateIsClean(t *testing.T) {
	// Bash changes its own signal state (it ignores SIGQUIT, blocks SIGCHLD
	// around waits), so look at a program it execs: that shows what bash
	// was given.
	out := runHostile(t, "exec grep -E '^Sig(Blk|Ign):' /proc/self/status")
	assert.Contains(t, out, "SigBlk:\t0000000000000000")
	assert.Contains(t, out, "SigIgn:\t0000000000000000")
}

// TestHostileHarnessIsHostile is the control for the two tests above: the
// helper's inherited state does reach a command started without shellsup.
func TestHostileHarnessIsHostile(t *testing.T) {
	cmd := helpers.Command("exec-shellsup", "-c", "ls -l /proc/$$/fd; exec grep -E '^Sig(Blk|Ign):' /proc/self/status")
	cmd.Env = append(cmd.Env, "SHELLSUP_TEST_BIN=/bin/bash",
		"SHELLSUP_TEST_CANARY="+filepath.Join(t.TempDir(), "canary"))
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.NotContains(t, string(out), "SigBlk:\t0000000000000000")
	assert.NotContains(t, string(out), "SigIgn:\t0000000000000000")
	assert.Equal(t, 3, strings.Count(string(out), "canary"), string(out))
}

func TestStdinIsEmptyAndNoTerminal(t *testing.T) {
	r := runShellsup(t, opts{command: "cat; echo cat-done; cat /dev/tty; echo tty=$?"})
	tot := requireTotals(t, r)
	assert.Equal(t, "cat-done\ntty=1\n", tot.Stdout)
	assert.Contains(t, tot.Stderr, "/dev/tty")
}
