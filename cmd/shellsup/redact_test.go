//go:build linux

package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

const (
	awsKey     = "AKIAIOSFODNN7EXAMPLE"
	awsReplace = "[REDACTED:aws-access-key-id]"
)

// noKeyPart fails if any 8-byte piece of the key survived.
func noKeyPart(t *testing.T, where, text string) {
	t.Helper()
	for i := 0; i+8 <= len(awsKey); i++ {
		assert.NotContains(t, text, awsKey[i:i+8], "%s holds part of the key", where)
	}
}

// An AWS key written in two halves, with a sleep between (two reads), is
// replaced in the captured text and in the progress frames.
func TestRedactKeySplitAcrossWrites(t *testing.T) {
	r := runShellsup(t, opts{args: []string{"--redact"}, command: "printf 'key=" + awsKey[:9] + "'; sleep 0.3; printf '" + awsKey[9:] + " ok\\n'; echo " + awsKey + " >&2"})
	tot := requireTotals(t, r)
	assert.Equal(t, "key="+awsReplace+" ok\n", tot.Stdout)
	assert.Equal(t, awsReplace+"\n", tot.Stderr)
	assert.Equal(t, 2, tot.Redactions)
	assert.Equal(t, tot.Stdout, r.stdout, "progress carries the redacted text")
	assert.Equal(t, int64(len(tot.Stdout)+len(tot.Stderr)), tot.CapturedBytes)
	assert.Equal(t, tot.CapturedBytes, tot.ProgressBytes)
	assert.Equal(t, int64(len("key="+awsKey+" ok\n"+awsKey+"\n")), tot.TotalBytes, "raw bytes are counted as read")
}

// A key split across two writes where the budget runs out: neither the
// capture nor the progress holds any part of it, and the marker is there
// exactly once, the budget respected.
func TestRedactKeyAcrossTheBudgetCut(t *testing.T) {
	const budget = 120
	marker := "\n... output truncated at 120-byte capture limit ...\n"
	for _, before := range []int{30, 40, 50, 60, 70} { // the cut falls before, in and after the key
		filler := strings.Repeat("f", before)
		r := runShellsup(t, opts{
			args:    []string{"--redact", "--budget", "120"},
			command: "printf '" + filler + " " + awsKey[:11] + "'; sleep 0.2; printf '" + awsKey[11:] + " tail\\n'; seq 1 50",
		})
		tot := requireTotals(t, r)
		noKeyPart(t, "stdout", tot.Stdout)
		noKeyPart(t, "progress", r.stdout)
		assert.Equal(t, 1, strings.Count(tot.Stdout, marker), "one marker: %q", tot.Stdout)
		assert.True(t, strings.HasSuffix(tot.Stdout, marker))
		assert.True(t, tot.Truncated)
		assert.Equal(t, int64(len(tot.Stdout)), tot.CapturedBytes)
		assert.LessOrEqual(t, tot.CapturedBytes, int64(budget))
		assert.Equal(t, tot.Stdout, r.stdout)
		assert.True(t, strings.HasPrefix(tot.Stdout, filler[:min(before, budget-len(marker))]), "the text before the key is kept: %q", tot.Stdout)
	}
}

func TestRedactCustomPatternAndTail(t *testing.T) {
	r := runShellsup(t, opts{
		args:    []string{"--redact-pattern", `sk-[a-z0-9]{10}`, "--capture", "tail", "--budget", "300"},
		command: "echo sk-abcdef0123 first; seq 1 1000; echo last " + awsKey + " sk-0123456789",
	})
	tot := requireTotals(t, r)
	assert.True(t, strings.HasSuffix(tot.Stdout, "\nlast "+awsReplace+" [REDACTED:custom]\n"), tot.Stdout)
	assert.NotContains(t, r.stdout, "sk-abcdef0123", "progress is redacted too")
	assert.Equal(t, 3, tot.Redactions)
	assert.Equal(t, 1, strings.Count(tot.Stdout, "bytes left out"))
}

func TestRedactOffByDefault(t *testing.T) {
	tot := requireTotals(t, runShellsup(t, opts{command: "echo " + awsKey}))
	assert.Equal(t, awsKey+"\n", tot.Stdout)
	assert.Zero(t, tot.Redactions)
}

func TestRedactPatternRefused(t *testing.T) {
	for pattern, msg := range map[string]string{
		"(":  `redact pattern "(" does not compile`,
		"a*": `redact pattern "a*" matches the empty string`,
	} {
		marker := filepath.Join(t.TempDir(), "spawned")
		r := runShellsup(t, opts{args: []string{"--redact-pattern", pattern}, command: "touch " + marker})
		assertRefused(t, r, protocol.CategoryValidation, msg, marker)
	}
}

// In human mode the terminal gets the redacted text too, all of it.
func TestRedactHumanMode(t *testing.T) {
	tok := reapertest.NewToken()
	cmd := exec.Command(shellsupBin, "--redact", "--budget", "100", "--", "seq 1 2000; echo "+awsKey+"; echo "+awsKey+" >&2")
	cmd.Env = baseEnv(tok)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run())
	assert.Equal(t, seqText(2000)+awsReplace+"\n", out.String())
	assert.True(t, strings.HasPrefix(errb.String(), awsReplace+"\n"), errb.String())
	assert.Contains(t, errb.String(), "; 2 secrets redacted")
	reapertest.Check(t, tok)
}

// TestRedactEchoedCommand: a secret on the command line is a secret in the
// result too: start and totals echo the command redacted (bash runs it as
// given), and the long-line and key-value shapes are caught end to end.
func TestRedactEchoedCommand(t *testing.T) {
	r := runShellsup(t, opts{args: []string{"--redact"}, command: "K=" + awsKey + "; DB_PASSWORD=hunter2hunter2 true; echo ${#K}"})
	tot := requireTotals(t, r)
	require.NotNil(t, r.start)
	assert.Equal(t, "20\n", tot.Stdout, "bash got the real command")
	for where, cmd := range map[string]string{"start": r.start.Command, "totals": tot.Command} {
		noKeyPart(t, where, cmd)
		assert.NotContains(t, cmd, "hunter2", where)
		assert.Contains(t, cmd, awsReplace, where)
	}
}

// TestRedactHugeToken: Authorization: Bearer + 16 MiB of A in one line is
// replaced once and the run ends well within its timeout (the redactor was
// quadratic on a long match: 100 s, a timeout).
func TestRedactHugeToken(t *testing.T) {
	r := runShellsup(t, opts{args: []string{"--redact", "--timeout", "60"},
		command: "printf 'Authorization: Bearer '; head -c 16777216 /dev/zero | tr '\\0' A; echo; echo next"})
	tot := requireTotals(t, r)
	assert.False(t, tot.TimedOut)
	assert.Equal(t, "Authorization: [REDACTED:bearer-token]\nnext\n", tot.Stdout)
	assert.Equal(t, 1, tot.Redactions)
}
