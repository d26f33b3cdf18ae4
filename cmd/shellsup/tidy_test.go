//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/protocol"
)

const tidyCorpus = "../../testdata/tidy"

// holdLong makes the test build hold a partial line for a minute, so that
// a whole text compared does not depend on a scheduler's pause of 50 ms.
var holdLong = []string{"SHELLSUP_TEST_TIDY_HOLD=1m"}

// Every capture of the corpus, cat'ed through shellsup --tidy, is its
// .want text, in the totals and in the progress frames alike; and the
// arithmetic holds: raw bytes minus tidied bytes is the captured text.
func TestTidyCorpus(t *testing.T) {
	ins, err := filepath.Glob(filepath.Join(tidyCorpus, "*.in"))
	require.NoError(t, err)
	require.NotEmpty(t, ins)
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in")
		t.Run(name, func(t *testing.T) {
			abs, err := filepath.Abs(in)
			require.NoError(t, err)
			want, err := os.ReadFile(strings.TrimSuffix(abs, ".in") + ".want")
			require.NoError(t, err)
			raw, err := os.ReadFile(abs)
			require.NoError(t, err)
			r := runShellsup(t, opts{bin: seamsBin, args: []string{"--tidy"}, env: holdLong, command: "cat " + abs})
			tot := requireTotals(t, r)
			assert.Equal(t, string(want), tot.Stdout)
			assert.Equal(t, tot.Stdout, r.stdout, "progress carries the tidied text")
			assert.True(t, r.start.Tidy, "start says tidy")
			assert.Equal(t, int64(len(raw)), tot.StdoutBytes, "stdoutBytes is still the raw count")
			assert.Equal(t, tot.StdoutBytes-tot.StdoutTidiedBytes, int64(len(tot.Stdout)), "raw - tidied = captured")
			assert.Zero(t, tot.StdoutLossyBytes)
			assert.False(t, tot.StdoutBinary)
			assert.Equal(t, tot.CapturedBytes, int64(len(tot.Stdout)+len(tot.Stderr)))
		})
	}
}

// A binary file cat'ed is one line under --tidy, and binary in the totals
// with or without it; the spill file keeps its bytes exactly.
func TestTidyBinary(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join(tidyCorpus, "true.bin"))
	require.NoError(t, err)
	raw, err := os.ReadFile(abs)
	require.NoError(t, err)
	spill := t.TempDir()
	r := runShellsup(t, opts{args: []string{"--tidy", "--spill", spill}, command: "cat " + abs + " >&2; echo text"})
	tot := requireTotals(t, r)
	want := fmt.Sprintf("[binary output: %d bytes; starts 7f 45 4c 46 %02x %02x %02x %02x …]\n", len(raw), raw[4], raw[5], raw[6], raw[7])
	assert.Equal(t, want, tot.Stderr)
	assert.Equal(t, "text\n", tot.Stdout)
	assert.True(t, tot.StderrBinary)
	assert.False(t, tot.StdoutBinary)
	assert.Positive(t, tot.StderrLossyBytes)
	assert.Equal(t, int64(len(raw)), tot.StderrBytes)
	require.NotNil(t, tot.Spill)
	kept, err := os.ReadFile(tot.Spill.Stderr)
	require.NoError(t, err)
	assert.Equal(t, raw, kept, "the spill file has the raw bytes")

	plain := requireTotals(t, runShellsup(t, opts{command: "cat " + abs}))
	assert.True(t, plain.StdoutBinary, "binary is reported without --tidy too")
	assert.Positive(t, plain.StdoutLossyBytes)
	assert.Contains(t, plain.Stdout, "\uFFFD", "without --tidy the text is the decoded bytes")
	assert.Zero(t, plain.StdoutTidiedBytes)
}

// Lossy bytes are counted without --tidy; a few in a text are not binary
// (more than 819 of the first 8 KiB would be).
func TestLossyNotBinary(t *testing.T) {
	tot := requireTotals(t, runShellsup(t, opts{command: `printf 'caf\xe9 au lait, cr\xe8me br\xfbl\xe9e, and more words\n'`}))
	assert.Equal(t, int64(4), tot.StdoutLossyBytes)
	assert.False(t, tot.StdoutBinary, "4 lossy bytes are not 820")
	tot = requireTotals(t, runShellsup(t, opts{args: []string{"--tidy"}, command: `printf 'caf\xe9 au lait, cr\xe8me br\xfbl\xe9e, and more words\n'`}))
	assert.Equal(t, "caf\uFFFD au lait, cr\uFFFDme br\uFFFDl\uFFFDe, and more words\n", tot.Stdout)
	assert.Equal(t, int64(4), tot.StdoutLossyBytes)
}

// 200 redraws of one progress line, one write each, cost one line of the
// budget: its final state.
func TestTidyRedrawsCostOneLine(t *testing.T) {
	cmd := `printf 'Collecting x\n'; for i in $(seq 1 200); do printf '\r  Downloading x.whl %3d/200 kB \033[32m%3d%%\033[0m' $i $((i/2)); done; printf '\nSaved\n'`
	tot := requireTotals(t, runShellsup(t, opts{args: []string{"--tidy"}, command: cmd}))
	assert.Equal(t, "Collecting x\n  Downloading x.whl 200/200 kB 100%\nSaved\n", tot.Stdout)
	assert.Equal(t, int64(len(tot.Stdout)), tot.CapturedBytes)
	assert.Greater(t, tot.StdoutTidiedBytes, int64(200*30), "the redraws were tidied away")
}

// A megabyte of ls --color --hyperlink keeps every file name under the
// default budget with --tidy; without it the capture is cut.
func TestTidyLsColorKeepsEveryName(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 40))
	require.NoError(t, os.Mkdir(dir, 0o755))
	var names []string
	for i := range 9000 {
		name := fmt.Sprintf("f%04d", i)
		names = append(names, name)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o755)) // executables: coloured
	}
	cmd := "cd " + dir + " && ls -1 --color=always --hyperlink=always"
	tot := requireTotals(t, runShellsup(t, opts{args: []string{"--tidy"}, command: cmd}))
	assert.GreaterOrEqual(t, tot.StdoutBytes, int64(1<<20), "the listing is a megabyte")
	assert.False(t, tot.Truncated)
	assert.Equal(t, strings.Join(names, "\n")+"\n", tot.Stdout)

	plain := requireTotals(t, runShellsup(t, opts{command: cmd}))
	assert.True(t, plain.Truncated, "without --tidy the same listing overflows the budget")
}

// A partial line (a prompt) is released 50 ms after it came, long before
// its line ends: the progress stays live under --tidy.
func TestTidyPartialLineLive(t *testing.T) {
	var at time.Duration
	began := time.Now()
	r := runShellsup(t, opts{args: []string{"--tidy"}, command: "printf 'Password: '; sleep 2; echo ok",
		onFrame: func(_ *running, f protocol.Frame) {
			if p, ok := f.(*protocol.Progress); ok && at == 0 {
				at = time.Since(began)
				assert.Equal(t, "Password: ", p.Text)
			}
		}})
	tot := requireTotals(t, r)
	assert.Equal(t, "Password: ok\n", tot.Stdout)
	require.NotZero(t, at)
	// The command sleeps 2 s after the prompt: had the prompt waited for
	// its line's end, it would have come with the totals.
	assert.Less(t, at, r.elapsed-time.Second, "the prompt waited for its line's end")
}

// --tidy happens before --redact: a secret split by colour codes is still
// replaced.
func TestTidyThenRedact(t *testing.T) {
	tot := requireTotals(t, runShellsup(t, opts{args: []string{"--tidy", "--redact"}, command: `printf 'key=AKIAIOSF\033[1mODNN7EXAMPLE\033[0m\n'`}))
	assert.Equal(t, "key="+awsReplace+"\n", tot.Stdout)
}

// A tail capture keeps the end of the tidied text: the window is fed what
// the tidier releases.
func TestTidyTailCapture(t *testing.T) {
	cmd := `for i in $(seq 1 5000); do printf '\033[32mline %d\033[0m\r\n' $i; done`
	tot := requireTotals(t, runShellsup(t, opts{args: []string{"--tidy", "--capture", "tail", "--budget", "4096"}, command: cmd}))
	assert.True(t, tot.Truncated)
	assert.True(t, strings.HasSuffix(tot.Stdout, "line 4999\nline 5000\n"), "%q", tot.Stdout[max(len(tot.Stdout)-60, 0):])
	assert.NotContains(t, tot.Stdout, "\x1b")
	assert.NotContains(t, tot.Stdout, "\r")
	assert.LessOrEqual(t, tot.CapturedBytes, int64(4096))
}

// Human mode forwards the raw bytes to the terminal (it draws them); the
// summary counts the tidied capture.
func TestTidyHumanMode(t *testing.T) {
	stdout, stderr, code := human(t, []string{"--tidy"}, `printf '\033[1mbold\033[0m\n'`)
	assert.Equal(t, 0, code)
	assert.Equal(t, "\x1b[1mbold\x1b[0m\n", string(stdout))
	assert.Contains(t, string(stderr), "captured 5 of 13 bytes")
}
