package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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

// checkedBlocks returns the transcript blocks marked <!-- checked --> in the
// README and docs/*.md, by file.
func checkedBlocks(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	out := map[string][]string{}
	for _, f := range append(files, "../../README.md") {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		rest := string(raw)
		for {
			var ok bool
			if _, rest, ok = strings.Cut(rest, "<!-- checked -->\n```\n"); !ok {
				break
			}
			block, after, ok := strings.Cut(rest, "\n```\n")
			require.True(t, ok, "%s: a checked block is not closed", f)
			out[f], rest = append(out[f], block), after
		}
	}
	return out
}

// Every transcript marked <!-- checked --> in the README and docs/ is run
// as written, with this shellsup first on PATH: each "$ COMMAND" prints
// exactly the lines after it (stdout and stderr), and "$ echo $?" gives the
// exit code shown.
func TestCheckedTranscripts(t *testing.T) {
	blocks := checkedBlocks(t)
	require.NotEmpty(t, blocks["../../docs/cli.md"], "docs/cli.md has no checked transcript")
	dir := t.TempDir()
	require.NoError(t, os.Symlink(shellsupBin, filepath.Join(dir, "shellsup")))
	for file, list := range blocks {
		for _, block := range list {
			runTranscript(t, file, block, dir)
		}
	}
}

// runTranscript runs one checked block.
func runTranscript(t *testing.T, file, block, bindir string) {
	t.Helper()
	var cmdline string
	var want []string
	code := 0
	flush := func() {
		if cmdline == "" {
			return
		}
		tok := reapertest.NewToken()
		cmd := exec.Command("/bin/bash", "-c", cmdline)
		cmd.Env = append(baseEnv(tok), "PATH="+bindir+":/usr/bin:/bin")
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		reapertest.Check(t, tok)
		code = 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else {
			require.NoError(t, err, "%s: %s", file, cmdline)
		}
		assert.Equal(t, strings.Join(want, ""), string(out), "%s: %s", file, cmdline)
		cmdline, want = "", nil
	}
	lines := strings.Split(block, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case line == "$ echo $?":
			flush()
			require.Less(t, i+1, len(lines), "%s: `echo $?` shows no code", file)
			i++
			assert.Equal(t, lines[i], strconv.Itoa(code), "%s: the exit code", file)
		case strings.HasPrefix(line, "$ "):
			flush()
			cmdline = strings.TrimPrefix(line, "$ ")
		default:
			require.NotEmpty(t, cmdline, "%s: output before any command: %q", file, line)
			want = append(want, line+"\n")
		}
	}
	flush()
}
