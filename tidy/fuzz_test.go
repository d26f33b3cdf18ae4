package tidy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shellsup/shellsup/decoder"
)

// FuzzTidy: however the bytes are split into reads, the tidied text is the
// same; a line never grows far past the cap; Removed is exact.
func FuzzTidy(f *testing.F) {
	for _, s := range []string{"\x1b[31mred\x1b[0m\n", "a\rb\bc\x1b[K\n", "\x1b]8;;x\x07y\x1b]8;;\x1b\\\n", "x\nx\nx\nx\n", "\u009b1m\u009d0;t\u009c"} {
		f.Add([]byte(s), uint16(3), uint16(7))
	}
	if ins, _ := filepath.Glob(filepath.Join(corpusDir, "*.in")); len(ins) > 0 {
		for _, in := range ins[:min(len(ins), 4)] {
			if b, err := os.ReadFile(in); err == nil && len(b) < 4096 {
				f.Add(b, uint16(len(b)/3), uint16(len(b)/2))
			}
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, a, b uint16) {
		i, j := min(int(a), len(raw)), min(int(b), len(raw))
		if i > j {
			i, j = j, i
		}
		var d decoder.Decoder
		tt := New(MinLine)
		var out, text []byte
		var in int64
		for _, r := range [][]byte{raw[:i], raw[i:j], raw[j:]} {
			text = d.Decode(text[:0], r)
			in += int64(len(text))
			out = tt.Write(out, text)
			if len(tt.line) > MinLine+3*maxArg {
				t.Fatalf("the line grew to %d bytes", len(tt.line))
			}
		}
		text = d.Flush(text[:0])
		in += int64(len(text))
		out = tt.Write(out, text)
		out = tt.Close(out)
		if tt.Removed() != in-int64(len(out)) {
			t.Fatalf("Removed %d, want %d", tt.Removed(), in-int64(len(out)))
		}
		if got := pipelineCap(MinLine, [][]byte{raw}); got != string(out) {
			t.Fatalf("split at %d, %d: got %q, want %q", i, j, out, got)
		}
	})
}

// pipelineCap is pipeline with a line cap.
func pipelineCap(capLine int, reads [][]byte) string {
	var d decoder.Decoder
	t := New(capLine)
	var out, text []byte
	for _, r := range reads {
		text = d.Decode(text[:0], r)
		out = t.Write(out, text)
	}
	out = t.Write(out, d.Flush(text[:0]))
	return string(t.Close(out))
}
