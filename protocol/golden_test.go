package protocol

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

var update = flag.Bool("update", false, "rewrite testdata/frames/golden.json from the frames below")

const goldenPath = "../testdata/frames/golden.json"

// golden is one entry of testdata/frames/golden.json, read by the Go and
// Python bindings' tests too: the frame's bytes (length prefix included) and
// the map a generic msgpack reader gets from its body.
type golden struct {
	Name  string         `json:"name"`
	Type  string         `json:"type"`
	Hex   string         `json:"hex"`
	Value map[string]any `json:"value"`
}

func ptr[T any](v T) *T { return &v }

// goldenFrames are the canonical frames: every type, the edge values
// (nulls, non-ASCII text, a fractional timeout, stragglers).
func goldenFrames() []struct {
	name  string
	frame Frame
} {
	return []struct {
		name  string
		frame Frame
	}{
		{"start", &Start{Version: Version, Pid: 4242, ChildPid: 4243, Command: "echo hi", Cwd: "/tmp", Timeout: 120, Budget: 65536, Containment: "subreaper", Capture: "head", Login: true}},
		{"start-job", &Start{Version: Version, Pid: 4242, ChildPid: 4243, Command: "python3 -m http.server 0", Cwd: "/tmp", Timeout: 3600, Budget: 65536, Containment: "subreaper",
			Capture: "tail", Lifetime: 3600, Spill: "/tmp/spill/shellsup-4242-99", Login: true}},
		{"start-fraction", &Start{Version: Version, Pid: 1, ChildPid: 2, Command: "sleep 1", Cwd: "/", Timeout: 0.05, Budget: 100, Containment: "subreaper", Capture: "head"}},
		{"progress-stdout", &Progress{Stream: "stdout", Text: "hello\n"}},
		{"progress-stderr-utf8", &Progress{Stream: "stderr", Text: "€ \ufffd ok"}},
		{"progress-marker", &Progress{Stream: "stdout", Text: "\n... output truncated at 65536-byte capture limit ...\n"}},
		{"timeout", &Timeout{Timeout: 0.05}},
		{"cancel-control", &Cancel{}},
		{"cancel-request", &Cancel{Reason: ReasonRequest}},
		{"cancel-parent-gone", &Cancel{Reason: ReasonParentGone}},
		{"totals-exit", &Totals{
			Result:  Result{Command: "exit 3", Cwd: "/tmp", ExitCode: ptr(3), TotalBytes: 0, DurationMs: 12},
			Cleanup: Cleanup{Tier: "subreaper", Trigger: "exit", Reaped: 1, Rounds: 1, Stragglers: []Straggler{}, Ms: 1},
			Capture: "head",
		}},
		{"totals-killed", &Totals{
			Result: Result{Command: "kill -9 $$", Cwd: "/", Stdout: "a", Stderr: "b", ExitCode: ptr(137), Signal: ptr("SIGKILL"),
				TotalBytes: 2, CapturedBytes: 2, ProgressBytes: 2, DurationMs: 5},
			Cleanup:     Cleanup{Tier: "subreaper", Trigger: "exit", Reaped: 1, Rounds: 1, Stragglers: []Straggler{}},
			StdoutBytes: 1, StderrBytes: 1, Capture: "head",
		}},
		{"totals-spill-tail", &Totals{
			Result: Result{Command: "yes | head -c 9000000", Cwd: "/", Stdout: "\n... 8934400 bytes left out (65536-byte capture limit) ...\ny\n", ExitCode: ptr(0),
				Truncated: true, TotalBytes: 9000000, CapturedBytes: 65536, ProgressBytes: 65536, DurationMs: 80},
			Cleanup:     Cleanup{Tier: "subreaper", Trigger: "exit", Reaped: 1, Rounds: 1, Stragglers: []Straggler{}},
			StdoutBytes: 9000000, Redactions: 2, Capture: "tail", LeftOut: 8934400,
			Spill: &Spill{Dir: "/s/shellsup-7-8", Stdout: "/s/shellsup-7-8/stdout", Stderr: "/s/shellsup-7-8/stderr",
				StdoutWritten: 8388608, StdoutDropped: 611392, Cut: true},
		}},
		{"totals-timeout-stragglers", &Totals{
			Result:       Result{Command: "sleep 9", Cwd: "/", ExitCode: nil, TimedOut: true, Truncated: true, TotalBytes: 6291456, CapturedBytes: 65536, ProgressBytes: 65536, DurationMs: 7012},
			CancelReason: "",
			Cleanup: Cleanup{Tier: "subreaper", Trigger: "timeout", Signalled: 3, Killed: 1, Reaped: 2, Rounds: 9, Ms: 5003, DrainTimedOut: true,
				Stragglers: []Straggler{{Pid: 77, Comm: "odd (name) x", State: "D", Reason: "uninterruptible sleep (D state)"}}},
		}},
		{"totals-cancelled", &Totals{
			Result:       Result{Command: "sleep 300", Cwd: "/", ExitCode: ptr(143), Signal: ptr("SIGTERM"), Cancelled: true, DurationMs: 30},
			CancelReason: ReasonRequest,
			Cleanup:      Cleanup{Tier: "subreaper", Trigger: "cancel", Signalled: 1, Reaped: 1, Rounds: 2, Stragglers: []Straggler{}},
		}},
		{"totals-tidy-binary", &Totals{
			Result: Result{Command: "pip download x; cat /bin/true >&2", Cwd: "/", Stdout: "Downloading x (1.0 MB)\n100% done\n",
				Stderr: "[binary output: 35664 bytes; starts 7f 45 4c 46 02 01 01 00 …]\n", ExitCode: ptr(0),
				TotalBytes: 39664, CapturedBytes: 98, ProgressBytes: 98, DurationMs: 40},
			Cleanup:     Cleanup{Tier: "subreaper", Trigger: "exit", Reaped: 1, Rounds: 1, Stragglers: []Straggler{}},
			StdoutBytes: 4000, StderrBytes: 35664, Capture: "head",
			StreamText: StreamText{StderrLossyBytes: 7835, StderrBinary: true, StdoutTidiedBytes: 3967, StderrTidiedBytes: 50876},
		}},
		{"ports-query", &Ports{}},
		{"ports-answer", &Ports{Ports: []Port{{Proto: "tcp", Addr: "127.0.0.1", Port: 8000, Pid: 4250}, {Proto: "udp6", Addr: "::", Port: 5353, Pid: 4251}}}},
		{"ports-none", &Ports{Ports: []Port{}}},
		{"ports-query-port", &Ports{Ports: []Port{{Port: 8000}}}},
		{"ports-answer-cut", &Ports{Ports: []Port{{Proto: "tcp", Addr: "0.0.0.0", Port: 2000, Pid: 4250}}, Omitted: 30399}},
		{"error-validation", &Error{Category: CategoryValidation, Message: "timeout must be greater than 0 and at most 600 seconds (got 0)"}},
		{"error-containment", &Error{Category: CategoryContainmentUnavailable, Message: "/proc is not a mounted procfs"}},
		{"totals-status-oom", &Totals{
			Result:  Result{Command: "python3 hog.py", Cwd: "/", ExitCode: ptr(137), DurationMs: 900},
			Cleanup: Cleanup{Tier: "cgroup", Trigger: "exit", Signalled: 0, Reaped: 2, Rounds: 1, Stragglers: []Straggler{}, OOMKills: 1},
			Capture: "head", Status: StatusOOM,
		}},
		{"error-status", &Error{Category: CategoryInternal, Message: "creating the spill directory: no space left on device", Status: StatusFailed}},
	}
}

// TestGolden checks that every canonical frame encodes to the committed
// bytes and that the bytes decode back to the same frame and, read
// generically, to the committed map.
func TestGolden(t *testing.T) {
	frames := goldenFrames()
	if *update {
		writeGolden(t, frames)
	}
	raw, err := os.ReadFile(goldenPath)
	require.NoError(t, err, "run go test ./protocol -run TestGolden -update")
	var want []golden
	require.NoError(t, json.Unmarshal(raw, &want))
	require.Len(t, want, len(frames))
	for i, tc := range frames {
		t.Run(tc.name, func(t *testing.T) {
			g := want[i]
			require.Equal(t, tc.name, g.Name)
			got, err := NewEncoder(nil).Marshal(tc.frame)
			require.NoError(t, err)
			assert.Equal(t, g.Hex, hex.EncodeToString(got), "encoding changed")

			wire, err := hex.DecodeString(g.Hex)
			require.NoError(t, err)
			var f Frame
			require.NoError(t, NewDecoder(bytes.NewReader(wire)).Decode(&f))
			assert.Equal(t, tc.frame, f)
			assert.Equal(t, g.Type, f.Type())

			var generic map[string]any
			require.NoError(t, msgpack.Unmarshal(wire[4:], &generic))
			assert.Equal(t, normalise(t, g.Value), normalise(t, generic))
		})
	}
}

func writeGolden(t *testing.T, frames []struct {
	name  string
	frame Frame
}) {
	var out []golden
	for _, tc := range frames {
		wire, err := NewEncoder(nil).Marshal(tc.frame)
		require.NoError(t, err)
		var generic map[string]any
		require.NoError(t, msgpack.Unmarshal(wire[4:], &generic))
		out = append(out, golden{Name: tc.name, Type: tc.frame.Type(), Hex: hex.EncodeToString(wire), Value: generic})
	}
	b, err := json.MarshalIndent(out, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(goldenPath), 0o755))
	require.NoError(t, os.WriteFile(goldenPath, append(b, '\n'), 0o644))
}

// normalise round-trips v through JSON so numbers compare as float64 on
// both sides.
func normalise(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}
