package shellsup

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/shellsup/shellsup/protocol"
)

// goldenPath holds the canonical frames, shared with the protocol package
// and the Python binding: the bytes of each frame, length prefix included,
// and the map a generic msgpack reader gets from it.
var goldenPath = filepath.Join("..", "..", "testdata", "frames", "golden.json")

type golden struct {
	Name  string         `json:"name"`
	Type  string         `json:"type"`
	Hex   string         `json:"hex"`
	Value map[string]any `json:"value"`
}

func loadGolden(t *testing.T) []golden {
	t.Helper()
	raw, err := os.ReadFile(goldenPath)
	require.NoError(t, err)
	var gs []golden
	require.NoError(t, json.Unmarshal(raw, &gs))
	require.NotEmpty(t, gs)
	return gs
}

// goldenWire returns the bytes of the named golden frame.
func goldenWire(t *testing.T, name string) []byte {
	t.Helper()
	for _, g := range loadGolden(t) {
		if g.Name == name {
			b, err := hex.DecodeString(g.Hex)
			require.NoError(t, err)
			return b
		}
	}
	t.Fatalf("no golden frame %q in %s", name, goldenPath)
	return nil
}

// TestGoldenFrames decodes every golden frame through the binding's frame
// reader and checks what the binding makes of it against the committed
// value, read independently of the binding's own conversions.
func TestGoldenFrames(t *testing.T) {
	for _, g := range loadGolden(t) {
		t.Run(g.Name, func(t *testing.T) {
			wire, err := hex.DecodeString(g.Hex)
			require.NoError(t, err)
			fr := newFrameReader(bytes.NewReader(wire))
			f, err := fr.next()
			require.NoError(t, err)
			require.Equal(t, g.Type, f.Type())
			_, err = fr.next()
			require.ErrorIs(t, err, io.EOF, "one frame, nothing after it")

			v := value{t, g.Value}
			switch f := f.(type) {
			case *protocol.Start:
				assert.Equal(t, protocol.Start{
					Version: v.int("version"), Pid: v.int("pid"), ChildPid: v.int("childPid"),
					Command: v.str("command"), Cwd: v.str("cwd"), Timeout: v.num("timeout"),
					Budget: v.int("budget"), Containment: v.str("containment"),
					Capture: v.str("capture"), Lifetime: v.num("lifetime"), Spill: v.str("spill"), Login: v.bool("login"),
					Tidy: v.bool("tidy"),
				}, *f)
			case *protocol.Progress:
				assert.Equal(t, protocol.Progress{Stream: v.str("stream"), Text: v.str("text")}, *f)
			case *protocol.Timeout:
				assert.Equal(t, v.num("timeout"), f.Timeout)
			case *protocol.Cancel:
				assert.Equal(t, v.optStr("reason", ""), f.Reason)
			case *protocol.Totals:
				assert.Equal(t, wantResult(v), resultOf(f))
			case *protocol.Error:
				e := errorOf(f)
				assert.Equal(t, v.str("category"), e.Category)
				assert.Equal(t, v.str("message"), e.Message)
				assert.Equal(t, "shellsup: "+v.str("category")+": "+v.str("message"), e.Error())
			case *protocol.Ports:
				var want []protocol.Port
				if ps, ok := v.m["ports"].([]any); ok {
					want = []protocol.Port{}
					for _, p := range ps {
						pv := value{t, p.(map[string]any)}
						want = append(want, protocol.Port{Proto: pv.str("proto"), Addr: pv.str("addr"), Port: pv.int("port"), Pid: pv.int("pid")})
					}
				}
				assert.Equal(t, want, f.Ports)
			default:
				t.Fatalf("unexpected frame %T", f)
			}
		})
	}
}

// wantResult is the Result the totals value describes, per the field docs:
// a null exitCode is -1, a null signal "", milliseconds become durations.
func wantResult(v value) Result {
	c := value{v.t, v.m["cleanup"].(map[string]any)}
	stragglers := []Straggler{}
	for _, s := range c.m["stragglers"].([]any) {
		sv := value{v.t, s.(map[string]any)}
		stragglers = append(stragglers, Straggler{Pid: sv.int("pid"), Comm: sv.str("comm"), State: sv.str("state"), Reason: sv.str("reason")})
	}
	exit := -1
	if v.m["exitCode"] != nil {
		exit = v.int("exitCode")
	}
	res := Result{
		Command: v.str("command"), Cwd: v.str("cwd"), Stdout: v.str("stdout"), Stderr: v.str("stderr"),
		ExitCode: exit, Signal: v.optStr("signal", ""),
		Cancelled: v.bool("cancelled"), TimedOut: v.bool("timedOut"), CancelReason: v.str("cancelReason"),
		Truncated:  v.bool("truncated"),
		TotalBytes: int64(v.int("totalBytes")), CapturedBytes: int64(v.int("capturedBytes")), ProgressBytes: int64(v.int("progressBytes")),
		Duration: time.Duration(v.int("durationMs")) * time.Millisecond,
		Cleanup: Cleanup{
			Tier: c.str("tier"), Trigger: c.str("trigger"), Signalled: c.int("signalled"), Killed: c.int("killed"),
			Reaped: c.int("reaped"), Rounds: c.int("rounds"), Stragglers: stragglers,
			Duration: time.Duration(c.int("ms")) * time.Millisecond, DrainTimedOut: c.bool("drainTimedOut"),
		},
		Status: v.optStr("status", ""),
	}
	if n, ok := c.m["oomKills"].(float64); ok {
		res.Cleanup.OOMKills = int64(n)
	}
	if _, ok := v.m["stdoutBytes"]; ok {
		res.StdoutBytes, res.StderrBytes = int64(v.int("stdoutBytes")), int64(v.int("stderrBytes"))
	}
	if _, ok := v.m["stdoutLossyBytes"]; ok {
		res.StdoutText = StreamText{LossyBytes: int64(v.int("stdoutLossyBytes")), Binary: v.bool("stdoutBinary"), TidiedBytes: int64(v.int("stdoutTidiedBytes"))}
		res.StderrText = StreamText{LossyBytes: int64(v.int("stderrLossyBytes")), Binary: v.bool("stderrBinary"), TidiedBytes: int64(v.int("stderrTidiedBytes"))}
	}
	if sp, ok := v.m["spill"].(map[string]any); ok {
		s := value{v.t, sp}
		res.Spill = &Spill{Dir: s.str("dir"), Stdout: s.str("stdout"), Stderr: s.str("stderr"),
			StdoutWritten: int64(s.int("stdoutWritten")), StderrWritten: int64(s.int("stderrWritten")),
			StdoutDropped: int64(s.int("stdoutDropped")), StderrDropped: int64(s.int("stderrDropped")), Cut: s.bool("cut")}
	}
	return res
}

// value reads a golden JSON map, failing the test on a missing key.
type value struct {
	t *testing.T
	m map[string]any
}

func (v value) get(k string) any {
	x, ok := v.m[k]
	require.True(v.t, ok, "golden value has no key %q", k)
	return x
}
func (v value) str(k string) string  { return v.get(k).(string) }
func (v value) num(k string) float64 { return v.get(k).(float64) }
func (v value) int(k string) int     { return int(v.num(k)) }
func (v value) bool(k string) bool   { return v.get(k).(bool) }
func (v value) optStr(k, def string) string {
	if s, ok := v.m[k].(string); ok {
		return s
	}
	return def
}

// frameStream concatenates golden frames (and raw bytes) into one stream.
func frameStream(t *testing.T, parts ...any) *bytes.Reader {
	var b bytes.Buffer
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			b.Write(goldenWire(t, p))
		case []byte:
			b.Write(p)
		}
	}
	return bytes.NewReader(b.Bytes())
}

// rawFrame encodes v (a map) as one frame, bypassing protocol's types.
func rawFrame(t *testing.T, v map[string]any) []byte {
	body, err := msgpack.Marshal(v)
	require.NoError(t, err)
	return append([]byte{0, 0, 0, byte(len(body))}, body...)
}

// TestReadRun feeds whole runs made of golden frames through the reader
// Run uses: order, forward compatibility, the progress callback.
func TestReadRun(t *testing.T) {
	future := rawFrame(t, map[string]any{"type": "future-notice", "detail": "ignored"})
	extraKey := rawFrame(t, map[string]any{"type": "progress", "stream": "stdout", "text": "x", "newKey": 1})

	t.Run("a whole run", func(t *testing.T) {
		var calls []call
		r := frameStream(t, "start", "progress-stdout", future, "progress-stderr-utf8", extraKey,
			"progress-marker", "cancel-request", "totals-cancelled")
		cancelled := 0
		out, err := readRun(r, func(s, text string) error { calls = append(calls, call{s, text}); return nil }, func() { cancelled++ })
		require.NoError(t, err)
		assert.Equal(t, []call{{"stdout", "hello\n"}, {"stderr", "€ \ufffd ok"}, {"stdout", "x"},
			{"stdout", "\n... output truncated at 65536-byte capture limit ...\n"}}, calls)
		require.NotNil(t, out.totals)
		assert.True(t, resultOf(out.totals).Cancelled)
		assert.Zero(t, cancelled)
		assert.Zero(t, r.Len(), "read to the end")
	})
	t.Run("a frame after totals", func(t *testing.T) {
		r := frameStream(t, "start", "totals-cancelled", "progress-stdout")
		out, err := readRun(r, nil, func() {})
		require.ErrorContains(t, err, "a progress frame after the totals frame")
		require.NotNil(t, out.totals, "the totals read before it")
	})

	t.Run("a run that could not happen", func(t *testing.T) {
		out, err := readRun(frameStream(t, "error-containment"), nil, func() {})
		require.NoError(t, err)
		require.NotNil(t, out.failure)
		e := errorOf(out.failure)
		assert.Equal(t, CategoryContainmentUnavailable, e.Category)
		assert.False(t, e.IsRetryable())
	})

	t.Run("callback error cancels once and stops the calls", func(t *testing.T) {
		errStop := errors.New("stop")
		calls, cancels := 0, 0
		out, err := readRun(frameStream(t, "start", "progress-stdout", "progress-stdout", "totals-exit"),
			func(string, string) error { calls++; return errStop }, func() { cancels++ })
		require.NoError(t, err)
		assert.ErrorIs(t, out.callbackErr, errStop)
		assert.Equal(t, 1, calls)
		assert.Equal(t, 1, cancels)
		assert.NotNil(t, out.totals)
	})

	start2 := rawFrame(t, map[string]any{"type": "start", "version": 2})
	for _, tc := range []struct {
		name  string
		parts []any
		want  string
		is    error
	}{
		{"empty stream", nil, "ended before the start frame", nil},
		{"progress before start", []any{"progress-stdout"}, "a progress frame before the start frame", nil},
		{"totals before start", []any{"totals-exit"}, "a totals frame before the start frame", nil},
		{"error after start", []any{"start", "error-validation"}, "an error frame after the start frame", nil},
		{"second start", []any{"start", "start"}, "a second start frame", nil},
		{"no totals", []any{"start", "progress-stdout", "cancel-parent-gone"}, "ended before the totals frame", nil},
		{"newer protocol", []any{start2}, "protocol version 2", nil},
		{"cut inside a frame", []any{"start", goldenWire(t, "totals-exit")[:20]}, "truncated frame", protocol.ErrTruncated},
		{"oversized", []any{"start", []byte{0x00, 0x10, 0x00, 0x01}}, "frame too large", protocol.ErrTooLarge},
		{"not a map", []any{[]byte{0, 0, 0, 1, 0x01}}, "malformed frame", protocol.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readRun(frameStream(t, tc.parts...), nil, func() {})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
		})
	}
}
