package decoder

import (
	"bytes"
	"strings"
	"testing"
)

func TestStats(t *testing.T) {
	for _, c := range []struct {
		name   string
		in     string
		lossy  int64
		binary bool
	}{
		{"valid", "café\n", 0, false},
		{"lone FF", "\xff", 1, false},
		{"truncated sequence", "\xe2\x82A", 2, false},
		{"incomplete at EOF", "ok\xf0\x9f\x98", 3, false},
		{"819 lost of 8 KiB is not more than 10%", strings.Repeat("\xff", 819) + strings.Repeat("a", SniffBytes-819), 819, false},
		{"820 is", strings.Repeat("\xff", 820) + strings.Repeat("a", SniffBytes-820), 820, true},
		{"820 in a short stream", strings.Repeat("\xff", 820), 820, true},
		{"NUL", "a\x00b", 0, true},
		{"NUL late", strings.Repeat("a", 20000) + "\x00", 0, true},
		{"lossy past the first 8 KiB", strings.Repeat("a", SniffBytes) + strings.Repeat("\xff", 5000), 5000, false},
		{"latin-1 text", strings.Repeat("caf\xe9 au lait ", 100), 100, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			for cut := 0; cut <= len(c.in) && cut < 64; cut++ {
				var d Decoder
				d.Decode(nil, []byte(c.in[:cut]))
				d.Decode(nil, []byte(c.in[cut:]))
				d.Flush(nil)
				s := d.Stats()
				if s.Lossy != c.lossy || s.Binary() != c.binary || s.Bytes != int64(len(c.in)) {
					t.Fatalf("split at %d: %+v (binary %v), want lossy %d binary %v", cut, s, s.Binary(), c.lossy, c.binary)
				}
			}
		})
	}
}

func TestVerdict(t *testing.T) {
	var d Decoder
	d.Decode(nil, []byte("\xffab"))
	if b, final := d.Stats().Verdict(); b || final || !d.Stats().Suspect() {
		t.Fatalf("a short lossy start: binary %v final %v, want neither, and suspect", b, final)
	}
	d.Decode(nil, bytes.Repeat([]byte("x"), SniffBytes))
	if b, final := d.Stats().Verdict(); b || !final {
		t.Fatalf("past 8 KiB with one lossy byte: binary %v final %v", b, final)
	}
	var e Decoder
	e.Decode(nil, bytes.Repeat([]byte{0xff}, SniffBytes/10+1))
	if b, final := e.Stats().Verdict(); !b || !final {
		t.Fatalf("more than 10%% of 8 KiB lost: binary %v final %v", b, final)
	}
}
