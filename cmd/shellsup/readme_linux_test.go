package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/reaper/reapertest"
)

// The top-level README's command-line example, run as written: its
// command, its stdout, the start of its summary and its exit code.
func TestTheReadmeCLIExample(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, block, ok := strings.Cut(string(raw), "<!-- cli-example -->\n```\n")
	require.True(t, ok, "the README has no cli-example block")
	block, _, ok = strings.Cut(block, "\n```\n")
	require.True(t, ok, "the cli-example block is not closed")
	lines := strings.Split(block, "\n")
	require.Len(t, lines, 5, "%s", block)
	cmdline, ok := strings.CutPrefix(lines[0], "$ shellsup ")
	require.True(t, ok, lines[0])
	command, ok := strings.CutPrefix(cmdline, "-- '")
	require.True(t, ok && strings.HasSuffix(command, "'"), cmdline)
	command = strings.TrimSuffix(command, "'")
	require.Equal(t, "$ echo $?", lines[3])
	want, err := strconv.Atoi(lines[4])
	require.NoError(t, err)

	tok := reapertest.NewToken()
	cmd := exec.Command(shellsupBin, "--", command)
	cmd.Env = baseEnv(tok)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "%v", err)
	reapertest.Check(t, tok)
	assert.Equal(t, want, exit.ExitCode())
	assert.Equal(t, lines[1]+"\n", stdout.String())
	summary, _, _ := strings.Cut(lines[2], " in ")
	assert.True(t, strings.HasPrefix(stderr.String(), summary+" in "), "stderr %q, README %q", stderr.String(), lines[2])
}
