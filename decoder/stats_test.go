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
		{"lone FF", "\xff", 1, true},
		{"truncated sequence", "\xe2\x82A", 2, true},
		{"incomplete at EOF", "ok\xf0\x9f\x98", 3, true},
		{"one in ten is not more than 10%", "\xff" + strings.Repeat("a", 9), 1, false},
		{"one in nine is", "\xff" + strings.Repeat("a", 8), 1, true},
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
	if b, final := d.Stats().Verdict(); !b || final {
		t.Fatalf("a short lossy start: binary %v final %v, want true, not final", b, final)
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
