//go:build linux

package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/protocol"
)

var gapMarker = regexp.MustCompile(`\n\.\.\. (\d+) bytes left out \((\d+)-byte capture limit\) \.\.\.\n`)

// seqText is what `seq 1 n` prints.
func seqText(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// assertWindow checks a tail or head+tail capture of text on stdout: one
// marker whose count is what is missing, kept text from the output, the
// budget respected.
func assertWindow(t *testing.T, tot *protocol.Totals, text string, budget int) (head, tail string) {
	t.Helper()
	ms := gapMarker.FindAllStringSubmatchIndex(tot.Stdout, -1)
	require.Len(t, ms, 1, "exactly one marker in %q", tot.Stdout)
	m := ms[0]
	head, tail = tot.Stdout[:m[0]], tot.Stdout[m[1]:]
	left, _ := strconv.ParseInt(tot.Stdout[m[2]:m[3]], 10, 64)
	assert.Equal(t, strconv.Itoa(budget), tot.Stdout[m[4]:m[5]])
	assert.Equal(t, left, tot.LeftOut)
	assert.Equal(t, int64(len(text)), int64(len(head))+left+int64(len(tail)), "kept + left out = all the text")
	assert.True(t, strings.HasPrefix(text, head))
	assert.True(t, strings.HasSuffix(text, tail))
	assert.True(t, tot.Truncated)
	assert.Equal(t, int64(len(tot.Stdout)+len(tot.Stderr)), tot.CapturedBytes)
	assert.LessOrEqual(t, tot.CapturedBytes, int64(budget))
	assert.Equal(t, int64(len(text)), tot.TotalBytes)
	return head, tail
}

func TestCaptureTail(t *testing.T) {
	text := seqText(100000)
	r := runShellsup(t, opts{args: []string{"--capture", "tail", "--budget", "1000"}, command: "seq 1 100000"})
	tot := requireTotals(t, r)
	assert.Equal(t, "tail", r.start.Capture)
	assert.Equal(t, "tail", tot.Capture)
	head, tail := assertWindow(t, tot, text, 1000)
	assert.Empty(t, head)
	assert.True(t, strings.HasSuffix(tail, "\n99999\n100000\n"))
	assert.True(t, strings.HasPrefix(tot.Stdout[len(head):], "\n..."), "the marker comes first")
	assert.Regexp(t, `^\d+\n`, tail, "cut at a line boundary")
	// Progress still carries the text as it arrived, up to the budget.
	assert.True(t, strings.HasPrefix(r.stdout, "1\n2\n3\n"))
	assert.LessOrEqual(t, tot.ProgressBytes, int64(1000))
}

func TestCaptureHeadTail(t *testing.T) {
	text := seqText(100000)
	r := runShellsup(t, opts{args: []string{"--capture", "head+tail", "--budget", "2000"}, command: "seq 1 100000"})
	tot := requireTotals(t, r)
	assert.Equal(t, "head+tail", tot.Capture)
	head, tail := assertWindow(t, tot, text, 2000)
	assert.True(t, strings.HasPrefix(head, "1\n2\n3\n"))
	assert.True(t, strings.HasSuffix(head, "\n"), "head cut at a line boundary: %q", head[max(0, len(head)-20):])
	assert.True(t, strings.HasSuffix(tail, "\n100000\n"))
	assert.Regexp(t, `^\d+\n`, tail)
}

// Output that fits is kept whole in every mode, with no marker and
// nothing left out.
func TestCaptureModesFit(t *testing.T) {
	for _, mode := range []string{"head", "tail", "head+tail"} {
		t.Run(mode, func(t *testing.T) {
			r := runShellsup(t, opts{args: []string{"--capture", mode, "--budget", "1000"}, command: "seq 1 100; echo oops >&2"})
			tot := requireTotals(t, r)
			assert.Equal(t, seqText(100), tot.Stdout)
			assert.Equal(t, "oops\n", tot.Stderr)
			assert.False(t, tot.Truncated)
			assert.Zero(t, tot.LeftOut)
			assert.Equal(t, mode, tot.Capture)
			assert.Equal(t, tot.TotalBytes, tot.CapturedBytes)
		})
	}
}

// The default is today's head capture: --capture head changes nothing.
func TestCaptureHeadIsTheDefault(t *testing.T) {
	// stderr first, well before stdout overflows: the capture takes text in
	// arrival order across the streams, so the two runs must see one order.
	cmd := "printf '\\xff\\xe2\\x82A' >&2; sleep 0.3; seq 1 30000" // no sequence left open for EOF
	def := requireTotals(t, runShellsup(t, opts{args: []string{"--budget", "5000"}, command: cmd}))
	head := requireTotals(t, runShellsup(t, opts{args: []string{"--budget", "5000", "--capture", "head"}, command: cmd}))
	assert.Equal(t, def.Stdout, head.Stdout)
	assert.Equal(t, def.Stderr, head.Stderr)
	assert.Equal(t, def.CapturedBytes, head.CapturedBytes)
	assert.Equal(t, "head", def.Capture)
	assert.Zero(t, def.LeftOut)
	assert.True(t, strings.HasSuffix(def.Stdout, "\n... output truncated at 5000-byte capture limit ...\n"))
}

// windowRoom is the text a tail or head+tail window keeps whole under
// budget: the budget less the longest marker, reserved up front as the head
// capture reserves its own.
func windowRoom(budget int) int {
	return budget - len(fmt.Sprintf("\n... %d bytes left out (%d-byte capture limit) ...\n", int64(1)<<62, budget))
}

// Output one byte under, exactly at and one byte over what the window
// keeps whole.
func TestCaptureTailAroundTheBudget(t *testing.T) {
	const chars = 300
	text := strings.Repeat("é", chars) + "\n" // 601 bytes, two-byte code points
	for _, mode := range []string{"tail", "head+tail"} {
		for _, over := range []int{-1, 0, 1} {
			budget := len(text) + 69 // the longest marker of a 3-digit budget is 69 bytes
			require.Equal(t, len(text), windowRoom(budget))
			budget -= over
			t.Run(fmt.Sprintf("%s/%+d", mode, over), func(t *testing.T) {
				r := runShellsup(t, opts{
					args:    []string{"--capture", mode, "--budget", strconv.Itoa(budget)},
					command: fmt.Sprintf("for i in $(seq %d); do printf '\\303\\251'; done; echo", chars),
				})
				tot := requireTotals(t, r)
				if over <= 0 {
					assert.Equal(t, text, tot.Stdout)
					assert.False(t, tot.Truncated)
					return
				}
				head, tail := assertWindow(t, tot, text, budget)
				assert.True(t, len(head)%2 == 0 && len(tail)%2 == 1, "cut on code points: head %d, tail %d bytes", len(head), len(tail))
			})
		}
	}
}

func TestCaptureRefusals(t *testing.T) {
	rows := []struct {
		args []string
		msg  string
	}{
		{[]string{"--capture", "middle"}, `capture must be head, tail or head+tail (got "middle")`},
		{[]string{"--capture", ""}, ``}, // empty means the default
		{[]string{"--capture", "tail", "--budget", "60"}, "for capture tail (got 60)"},
	}
	for _, row := range rows {
		t.Run(strings.Join(row.args, " "), func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "spawned")
			r := runShellsup(t, opts{args: row.args, command: "touch " + marker})
			if row.msg == "" {
				requireTotals(t, r)
				return
			}
			assertRefused(t, r, protocol.CategoryValidation, row.msg, marker)
		})
	}
}

func TestLifetimeEndsAJob(t *testing.T) {
	r := runShellsup(t, opts{args: []string{"--lifetime", "1s"}, command: "echo ready; sleep 300"})
	tot := requireTotals(t, r)
	assert.Equal(t, 1.0, r.start.Lifetime)
	assert.Equal(t, 1.0, r.start.Timeout)
	assert.True(t, tot.TimedOut)
	assert.Equal(t, 124, r.exit)
	var to *protocol.Timeout
	for _, f := range r.frames {
		if f, ok := f.(*protocol.Timeout); ok {
			to = f
		}
	}
	require.NotNil(t, to)
	assert.Equal(t, 1.0, to.Timeout)
}

func TestLifetimeAccepts(t *testing.T) {
	for arg, secs := range map[string]float64{"7d": 604800, "1h": 3600, "90m": 5400, "604800": 604800, "0.5": 0.5, "2.5s": 2.5} {
		t.Run(arg, func(t *testing.T) {
			r := runShellsup(t, opts{args: []string{"--lifetime", arg}, command: "true"})
			requireTotals(t, r)
			assert.Equal(t, secs, r.start.Lifetime)
		})
	}
	r := runShellsup(t, opts{command: "true"})
	requireTotals(t, r)
	assert.Zero(t, r.start.Lifetime, "a call has no lifetime")
}

func TestLifetimeRefusals(t *testing.T) {
	rows := []struct {
		args []string
		msg  string
	}{
		{[]string{"--lifetime", "0"}, "lifetime must be greater than 0 and at most 604800 seconds (7 days) (got 0)"},
		{[]string{"--lifetime", "-1"}, "(got -1)"},
		{[]string{"--lifetime", "604801"}, "(got 604801)"},
		{[]string{"--lifetime", "8d"}, "(got 8d)"},
		{[]string{"--lifetime", "nan"}, "(got nan)"},
		{[]string{"--lifetime", "inf"}, "(got inf)"},
		{[]string{"--lifetime", "abc"}, `lifetime must be a duration greater than 0 and at most 604800 seconds (7 days), written as a number of seconds (1.5) or a number with a unit ms, s, m, h or d (500ms, 2s, 1m, 1h30m, 7d) (got "abc")`},
		{[]string{"--lifetime", "h"}, `(got "h")`},
		{[]string{"--lifetime", "1h", "--timeout", "5"}, `--lifetime "1h" and --timeout "5" exclude each other`},
	}
	for _, row := range rows {
		t.Run(strings.Join(row.args, " "), func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "spawned")
			r := runShellsup(t, opts{args: row.args, command: "touch " + marker})
			assertRefused(t, r, protocol.CategoryValidation, row.msg, marker)
		})
	}
}
