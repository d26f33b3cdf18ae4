//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"

	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// The version has one source, the VERSION file at the top of the repository.
func TestVersionComesFromTheVersionFile(t *testing.T) {
	want, err := os.ReadFile("../../VERSION")
	require.NoError(t, err)
	out, err := exec.Command(shellsupBin, "--version").Output()
	require.NoError(t, err)
	assert.Equal(t, "shellsup "+strings.TrimSpace(string(want))+" (protocol 1)\n", string(out))
}

// A bad option is named the way it was typed, in both modes, and nothing is spawned.
func TestBadOptionsAreQuotedAsTyped(t *testing.T) {
	rows := []struct {
		args []string
		msg  string
	}{
		{[]string{"-V"}, `unknown option "-V"`},
		{[]string{"--V"}, `unknown option "--V"`},
		{[]string{"-bogus=1"}, `unknown option "-bogus"`},
		{[]string{"--grace=1", "--Bogus=x"}, `unknown option "--Bogus"`},
	}
	for _, row := range rows {
		t.Run(strings.Join(row.args, " "), func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "spawned")
			r := runShellsup(t, opts{args: row.args, command: "touch " + marker})
			assertRefused(t, r, protocol.CategoryValidation, row.msg, marker)

			cmd := exec.Command(shellsupBin, append(row.args, "--", "touch "+marker)...)
			out, _ := cmd.CombinedOutput()
			assert.Equal(t, 125, cmd.ProcessState.ExitCode())
			assert.Contains(t, string(out), "shellsup: "+row.msg)
			assert.NoFileExists(t, marker)
		})
	}
}

// decodeOutput pipes raw frames into shellsup decode.
func decodeOutput(t *testing.T, raw []byte) (lines []map[string]any, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(shellsupBin, "decode")
	cmd.Stdin = bytes.NewReader(raw)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run() // the exit code is returned
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), "line %q", line)
		lines = append(lines, m)
	}
	return lines, errb.String(), cmd.ProcessState.ExitCode()
}

// shellsup --frames ... | shellsup decode gives one JSON object per frame,
// with the same content the protocol decoder reads.
func TestDecodeAFramesStream(t *testing.T) {
	tok := reapertest.NewToken()
	cmd := exec.Command(shellsupBin, "--frames", "--", `echo hi && printf 'caf\xc3'; printf '\xa9 \xff <&>\n' >&2; exit 3`)
	cmd.Env = baseEnv(tok)
	raw, err := cmd.Output()
	require.Equal(t, 3, cmd.ProcessState.ExitCode(), "%v", err)
	reapertest.Check(t, tok)

	lines, stderr, code := decodeOutput(t, raw)
	require.Equal(t, 0, code, stderr)
	var types []string
	for _, l := range lines {
		types = append(types, l["type"].(string))
	}
	require.GreaterOrEqual(t, len(types), 3, "%v", types)
	assert.Equal(t, "start", types[0])
	assert.Equal(t, "totals", types[len(types)-1])
	for _, typ := range types[1 : len(types)-1] {
		assert.Equal(t, "progress", typ)
	}
	totals := lines[len(lines)-1]
	// The é is split across two writes to two streams: each decodes on its own.
	assert.Equal(t, "hi\ncaf\ufffd", totals["stdout"])
	assert.Equal(t, "\ufffd \ufffd <&>\n", totals["stderr"])
	assert.EqualValues(t, 3, totals["exitCode"])
	assert.Nil(t, totals["signal"])
	assert.Equal(t, proctest.Containment(false), totals["cleanup"].(map[string]any)["tier"])

	// The same stream through the protocol decoder says the same.
	dec := protocol.NewDecoder(bytes.NewReader(raw))
	for i := range lines {
		var f protocol.Frame
		require.NoError(t, dec.Decode(&f))
		assert.Equal(t, f.Type(), lines[i]["type"])
		switch f := f.(type) {
		case *protocol.Start:
			assert.EqualValues(t, f.Pid, lines[i]["pid"])
			assert.Equal(t, f.Command, lines[i]["command"])
		case *protocol.Progress:
			assert.Equal(t, f.Text, lines[i]["text"])
		case *protocol.Totals:
			assert.Equal(t, f.Stdout, lines[i]["stdout"])
			assert.Equal(t, f.Stderr, lines[i]["stderr"])
		}
	}
}

// Keys come out in the order they were sent, and HTML characters are not escaped.
func TestDecodeKeepsKeyOrder(t *testing.T) {
	raw := encodeFrames(t, &protocol.Progress{Stream: "stdout", Text: "a && b <c>"})
	cmd := exec.Command(shellsupBin, "decode")
	cmd.Stdin = bytes.NewReader(raw)
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, `{"type": "progress", "stream": "stdout", "text": "a && b <c>"}`+"\n", string(out))
}

// A malformed stream: the frames before the bad one are printed, then the error, exit 1.
func TestDecodeReportsAMalformedFrame(t *testing.T) {
	good := encodeFrames(t, &protocol.Cancel{Reason: protocol.ReasonRequest})
	rows := map[string]struct {
		tail []byte
		msg  string
	}{
		"truncated body":   {[]byte{0, 0, 0, 9, 0x81}, "frame 2: stream ends inside a 9-byte frame"},
		"truncated length": {[]byte{0, 0}, "frame 2: stream ends inside a length prefix"},
		"zero length":      {[]byte{0, 0, 0, 0}, "frame 2: length 0 is outside 1 … 1048576"},
		"not a map":        {[]byte{0, 0, 0, 1, 0x01}, "frame 2: "},
	}
	for name, row := range rows {
		t.Run(name, func(t *testing.T) {
			lines, stderr, code := decodeOutput(t, append(append([]byte{}, good...), row.tail...))
			assert.Equal(t, 1, code)
			require.Len(t, lines, 1)
			assert.Equal(t, "cancel", lines[0]["type"])
			assert.True(t, strings.HasPrefix(stderr, "shellsup decode: "+row.msg), stderr)
		})
	}
}

// A missing value is named as typed too (human mode: nothing follows it).
func TestMissingValueQuotedAsTyped(t *testing.T) {
	for _, opt := range []string{"-timeout", "--cwd"} {
		cmd := exec.Command(shellsupBin, opt)
		out, _ := cmd.CombinedOutput()
		assert.Equal(t, 125, cmd.ProcessState.ExitCode())
		assert.Equal(t, "shellsup: option \""+opt+"\" needs a value; see shellsup --help\n", string(out))
	}
}

func TestDecodeRefusesArguments(t *testing.T) {
	cmd := exec.Command(shellsupBin, "decode", "file.bin")
	out, _ := cmd.CombinedOutput()
	assert.Equal(t, 2, cmd.ProcessState.ExitCode())
	assert.Contains(t, string(out), `unexpected argument "file.bin"`)

	help, err := exec.Command(shellsupBin, "decode", "--help").Output()
	require.NoError(t, err)
	assert.Contains(t, string(help), "usage: shellsup decode < FRAMES")
}

func encodeFrames(t *testing.T, frames ...protocol.Frame) []byte {
	var b bytes.Buffer
	enc := protocol.NewEncoder(&b)
	for _, f := range frames {
		require.NoError(t, enc.Encode(f))
	}
	return b.Bytes()
}

// The README's pipeline, as a user types it.
func TestDecodeThePipelineFromTheReadme(t *testing.T) {
	tok := reapertest.NewToken()
	q := strconv.Quote(shellsupBin)
	cmd := exec.Command("/bin/bash", "-c", q+` --frames -- 'echo hi' </dev/null | `+q+` decode`)
	cmd.Env = baseEnv(tok)
	out, err := cmd.Output()
	require.NoError(t, err)
	reapertest.Check(t, tok)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, lines, 3, "%s", out)
	assert.True(t, strings.HasPrefix(lines[0], `{"type": "start", "version": 1, "pid": `), lines[0])
	assert.Equal(t, `{"type": "progress", "stream": "stdout", "text": "hi\n"}`, lines[1])
	assert.True(t, strings.HasPrefix(lines[2], `{"type": "totals", "command": "echo hi", `), lines[2])
	assert.Contains(t, lines[2], `"stdout": "hi\n", "stderr": "", "exitCode": 0, "signal": null, `)
}
