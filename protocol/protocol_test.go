package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// frameOf wraps body in a length prefix.
func frameOf(body []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	return append(out, body...)
}

func mustPack(t testing.TB, v any) []byte {
	b, err := msgpack.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestRoundTripStream(t *testing.T) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	frames := goldenFrames()
	for _, tc := range frames {
		require.NoError(t, enc.Encode(tc.frame))
	}
	dec := NewDecoder(&buf)
	for _, tc := range frames {
		var f Frame
		require.NoError(t, dec.Decode(&f), tc.name)
		assert.Equal(t, tc.frame, f, tc.name)
	}
	var f Frame
	assert.Equal(t, io.EOF, dec.Decode(&f), "clean end of stream")
}

func TestUnknownKeysIgnored(t *testing.T) {
	body := mustPack(t, map[string]any{"type": "progress", "stream": "stdout", "text": "x", "future": []any{1, "two", map[string]any{"k": nil}}})
	var f Frame
	require.NoError(t, NewDecoder(bytes.NewReader(frameOf(body))).Decode(&f))
	assert.Equal(t, &Progress{Stream: "stdout", Text: "x"}, f)
}

func TestUnknownTypeSurfaced(t *testing.T) {
	body := mustPack(t, map[string]any{"type": "heartbeat", "n": 1})
	stream := append(frameOf(body), frameOf(mustPack(t, map[string]any{"type": "cancel"}))...)
	dec := NewDecoder(bytes.NewReader(stream))
	var f Frame
	require.NoError(t, dec.Decode(&f))
	assert.Equal(t, &Unknown{FrameType: "heartbeat"}, f)
	require.NoError(t, dec.Decode(&f), "the stream stays in step after an unknown frame")
	assert.Equal(t, &Cancel{}, f)
}

// TestHostile feeds malformed input: each row must give a *FrameError of the
// named kind and never panic.
func TestHostile(t *testing.T) {
	huge := binary.BigEndian.AppendUint32(nil, MaxFrameSize+1)
	nested := bytes.Repeat([]byte{0x91}, 1000) // 1000 nested one-element arrays
	nested = append(nested, 0xc0)
	rows := []struct {
		name  string
		input []byte
		kind  error
	}{
		{"truncated length", []byte{0, 0}, ErrTruncated},
		{"length 0", []byte{0, 0, 0, 0}, ErrEmpty},
		{"length over 1 MiB", append(huge, 0x80), ErrTooLarge},
		{"length 0xffffffff", []byte{0xff, 0xff, 0xff, 0xff}, ErrTooLarge},
		{"truncated body", append([]byte{0, 0, 0, 10}, 0x81, 0xa4), ErrTruncated},
		{"not msgpack", frameOf([]byte("hello, world")), ErrMalformed},
		{"reserved byte", frameOf([]byte{0xc1}), ErrMalformed},
		{"array instead of map", frameOf(mustPack(t, []any{"type", "cancel"})), ErrMalformed},
		{"string instead of map", frameOf(mustPack(t, "cancel")), ErrMalformed},
		{"map without type", frameOf(mustPack(t, map[string]any{"reason": "x"})), ErrMalformed},
		{"type is a number", frameOf(mustPack(t, map[string]any{"type": 7})), ErrMalformed},
		{"string where a number belongs", frameOf(mustPack(t, map[string]any{"type": "start", "pid": "12"})), ErrMalformed},
		{"number where a string belongs", frameOf(mustPack(t, map[string]any{"type": "progress", "text": 12})), ErrMalformed},
		{"map where a bool belongs", frameOf(mustPack(t, map[string]any{"type": "totals", "timedOut": map[string]any{}})), ErrMalformed},
		{"map truncated inside", frameOf([]byte{0x82, 0xa4, 't', 'y', 'p', 'e', 0xa6, 'c', 'a', 'n', 'c', 'e', 'l'}), ErrMalformed},
		{"trailing bytes", frameOf(append(mustPack(t, map[string]any{"type": "cancel"}), 0xc0)), ErrMalformed},
		{"deep nesting in unknown key", frameOf(append([]byte{0x82, 0xa4, 't', 'y', 'p', 'e', 0xa6, 'c', 'a', 'n', 'c', 'e', 'l', 0xa1, 'x'}, nested...)), nil},
		{"map length lies", frameOf([]byte{0xdf, 0xff, 0xff, 0xff, 0xff}), ErrMalformed},
		{"string length lies", frameOf([]byte{0x81, 0xa4, 't', 'y', 'p', 'e', 0xdb, 0xff, 0xff, 0xff, 0xf0}), ErrMalformed},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			var f Frame
			err := NewDecoder(bytes.NewReader(row.input)).Decode(&f)
			if row.kind == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var fe *FrameError
			require.True(t, errors.As(err, &fe), "want *FrameError, got %T: %v", err, err)
			assert.ErrorIs(t, err, row.kind)
			assert.True(t, strings.HasPrefix(err.Error(), "protocol: decode: "), err.Error())
		})
	}
}

func TestTooLargeNotRead(t *testing.T) {
	// The decoder must refuse on the length alone: the reader holds only
	// the prefix, so any attempt to read the body would fail differently.
	var f Frame
	err := NewDecoder(bytes.NewReader([]byte{0x00, 0x10, 0x00, 0x01})).Decode(&f)
	assert.ErrorIs(t, err, ErrTooLarge)
	assert.Contains(t, err.Error(), "1048577 bytes, limit 1048576")
}

func TestEncodeTooLarge(t *testing.T) {
	_, err := NewEncoder(nil).Marshal(&Progress{Stream: "stdout", Text: strings.Repeat("x", MaxFrameSize)})
	assert.ErrorIs(t, err, ErrTooLarge)
}

// TestLargestTotalsFits: a totals frame at the largest budget (512 KiB of
// captured text) with a command at the kernel's per-argument limit still
// fits one frame, which is why the budget is capped at 512 KiB.
func TestLargestTotalsFits(t *testing.T) {
	text := strings.Repeat("€", (512<<10)/3/2)
	f := &Totals{Result: Result{Command: strings.Repeat("c", 131071), Cwd: "/" + strings.Repeat("d", 4095), Stdout: text, Stderr: text}}
	b, err := NewEncoder(nil).Marshal(f)
	require.NoError(t, err)
	assert.Less(t, len(b), MaxFrameSize)
}

func FuzzDecode(f *testing.F) {
	for _, tc := range goldenFrames() {
		b, err := NewEncoder(nil).Marshal(tc.frame)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte{0, 0, 0, 1, 0x80})
	f.Add([]byte{0, 0, 0, 3, 0x91, 0x91, 0xc0})
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := NewDecoder(bytes.NewReader(data))
		for i := 0; i < 8; i++ {
			var fr Frame
			err := dec.Decode(&fr)
			if err != nil {
				var fe *FrameError
				if err != io.EOF && !errors.As(err, &fe) {
					t.Fatalf("untyped error %T: %v", err, err)
				}
				return
			}
			if fr == nil {
				t.Fatal("nil frame without error")
			}
			if _, unknown := fr.(*Unknown); unknown {
				continue
			}
			// A frame that decodes must encode and decode to itself.
			b, err := NewEncoder(nil).Marshal(fr)
			if err != nil {
				t.Fatalf("re-encoding %#v: %v", fr, err)
			}
			var again Frame
			if err := NewDecoder(bytes.NewReader(b)).Decode(&again); err != nil {
				t.Fatalf("decoding re-encoded %#v: %v", fr, err)
			}
			assert.Equal(t, fr, again)
		}
	})
}
