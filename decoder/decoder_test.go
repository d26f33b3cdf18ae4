package decoder_test

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/decoder"
)

// vector is one golden case written by testdata/gen_decoder_vectors.py: Python's
// raw.decode("utf-8", "replace") of the bytes in Hex.
type vector struct {
	Name string `json:"name"`
	Hex  string `json:"hex"`
	Text string `json:"text"`
	raw  []byte
}

// loadVectors reads the golden vectors shared with the Python generator.
func loadVectors(tb testing.TB) []vector {
	tb.Helper()
	path := filepath.Join("..", "testdata", "decoder", "vectors.json")
	b, err := os.ReadFile(path)
	require.NoError(tb, err, "regenerate with: python3 testdata/gen_decoder_vectors.py")
	var vs []vector
	require.NoError(tb, json.Unmarshal(b, &vs), "parsing %s", path)
	require.GreaterOrEqual(tb, len(vs), 60, "too few golden vectors in %s", path)
	for i := range vs {
		vs[i].raw, err = hex.DecodeString(vs[i].Hex)
		require.NoError(tb, err, "vector %q", vs[i].Name)
	}
	return vs
}

// decodeChunks decodes chunks in order with one Decoder, then flushes it.
func decodeChunks(chunks ...[]byte) string {
	var d decoder.Decoder
	var out []byte
	for _, c := range chunks {
		out = d.Decode(out, c)
	}
	return string(d.Flush(out))
}

// chunkings returns every way to cut p into 1, 2 or 3 consecutive pieces (empty pieces included),
// and p one byte at a time, each named by its cut points.
func chunkings(p []byte) map[string][][]byte {
	all := map[string][][]byte{"whole": {p}}
	for i := 0; i <= len(p); i++ {
		all["cut "+strconv.Itoa(i)] = [][]byte{p[:i], p[i:]}
		for j := i; j <= len(p); j++ {
			all["cut "+strconv.Itoa(i)+","+strconv.Itoa(j)] = [][]byte{p[:i], p[i:j], p[j:]}
		}
	}
	bytewise := make([][]byte, len(p))
	for i := range p {
		bytewise[i] = p[i : i+1]
	}
	all["byte at a time"] = bytewise
	return all
}

func TestDecodeGoldenVectorsEveryChunking(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			for how, chunks := range chunkings(v.raw) {
				if got := decodeChunks(chunks...); got != v.Text {
					t.Fatalf("decode(%x) split %s: got %+q, want %+q", v.raw, how, got, v.Text)
				}
			}
		})
	}
}

func TestReferenceGoldenVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		assert.Equal(t, v.Text, decoder.Reference(v.raw), "Reference(%x) for %q", v.raw, v.Name)
	}
}

// TestDecodeHostile states the rule of the README's "Output capture" in rows that do not depend on the golden file.
func TestDecodeHostile(t *testing.T) {
	const r = "\uFFFD"
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"spec: truncated 3-byte then ascii", "\xE2\x82A", r + "A"},
		{"spec: two bytes that never start a sequence", "\xFF\xFE", r + r},
		{"spec: incomplete at EOF is one replacement", "\xF0\x9F\x98", r},
		{"overlong C0 AF: C0 is never a lead", "\xC0\xAF", r + r},
		{"overlong C1 BF", "\xC1\xBF", r + r},
		{"overlong E0 80 80: E0 needs A0-BF", "\xE0\x80\x80", r + r + r},
		{"overlong F0 80 80 80: F0 needs 90-BF", "\xF0\x80\x80\x80", r + r + r + r},
		{"surrogate ED A0 80: ED needs 80-9F", "\xED\xA0\x80", r + r + r},
		{"above U+10FFFF F4 90 80 80: F4 needs 80-8F", "\xF4\x90\x80\x80", r + r + r + r},
		{"F5 is never a lead", "\xF5\x80\x80\x80", r + r + r + r},
		{"lone continuation", "\x80", r},
		{"interrupted by a new lead", "\xE2\x82\xE2\x82\xAC", r + "€"},
		{"valid then stray continuation", "é\xA9", "é" + r},
		{"highest code point", "\xF4\x8F\xBF\xBF", "\U0010FFFF"},
		{"the replacement character itself", "\xEF\xBF\xBD", r},
		{"nul passes through", "a\x00b", "a\x00b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for how, chunks := range chunkings([]byte(tt.in)) {
				assert.Equal(t, tt.want, decodeChunks(chunks...), "decode(%x) split %s", tt.in, how)
			}
		})
	}
}

// TestDecodeSplitInsideSequence cuts every valid 2-, 3- and 4-byte sequence at every point inside
// it, with text on both sides, and checks the held-back bytes produce nothing until completed.
func TestDecodeSplitInsideSequence(t *testing.T) {
	for _, char := range []string{"\u0080", "é", "\u07FF", "\u0800", "€", "\uD7FF", "\uE000", "\uFFFF",
		"\U00010000", "😀", "\U0010FFFF"} {
		for cut := 1; cut < len(char); cut++ {
			t.Run(char+" cut "+strconv.Itoa(cut), func(t *testing.T) {
				var d decoder.Decoder
				first := d.Decode(nil, []byte("abcdefgh"+char[:cut]))
				assert.Equal(t, "abcdefgh", string(first), "held-back bytes must not appear yet")
				rest := d.Decode(nil, []byte(char[cut:]+"z"))
				assert.Equal(t, char+"z", string(rest))
				assert.Empty(t, d.Flush(nil), "nothing left at EOF")
			})
		}
	}
}

func TestFlushResetsDecoder(t *testing.T) {
	var d decoder.Decoder
	assert.Empty(t, d.Decode(nil, []byte("\xF0\x9F\x98")), "incomplete sequence is held back")
	assert.Equal(t, "\uFFFD", string(d.Flush(nil)), "one replacement at EOF")
	assert.Empty(t, d.Flush(nil), "second flush adds nothing")
	assert.Equal(t, "A", string(d.Decode(nil, []byte("A"))), "decoder starts afresh")
}

func TestDecodeAppendsToDst(t *testing.T) {
	var d decoder.Decoder
	got := d.Decode([]byte("prefix:"), []byte("é\xFF"))
	assert.Equal(t, "prefix:é\uFFFD", string(got))
}

func TestDecodeDoesNotAllocate(t *testing.T) {
	in := []byte("ascii text, é, €, 😀, \xFF\xE2\x82A and a split \xF0\x9F")
	dst := make([]byte, 0, 4*len(in))
	var d decoder.Decoder
	allocs := testing.AllocsPerRun(100, func() {
		dst = d.Decode(dst[:0], in)
		dst = d.Flush(dst)
	})
	assert.Zero(t, allocs)
	assert.True(t, utf8.Valid(dst))
}
