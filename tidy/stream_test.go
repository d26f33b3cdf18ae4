package tidy

import (
	"strings"
	"testing"
)

// TestSplitAnywhere feeds each case split at every byte position (two writes) and in one-byte
// writes, and wants the text of one write.
func TestSplitAnywhere(t *testing.T) {
	for _, in := range []string{
		"\x1b[1;31mred\x1b[0m \x1b]8;;http://x\x1b\\link\x1b]8;;\x07\n",
		"10%\r20%\r\x1b[K100% ███\r\nnext\n",
		"\x1bPq#0~~\x1b\\\x1b(B\x1b_x\x1b\\\u009b1m\u009d0;t\u009cok ©\n",
		"abc\b\bX\x1b[2Dy\x1b[1G>\x1b[5C|\n",
		strings.Repeat("repeated line, long enough\n", 7) + "end",
	} {
		want := tidyAll(in)
		for cut := 0; cut <= len(in); cut++ {
			tt := New(MaxLine)
			out := tt.Write(nil, []byte(in[:cut]))
			out = tt.Write(out, []byte(in[cut:]))
			if got := string(tt.Close(out)); got != want {
				t.Fatalf("%q split at %d: got %q, want %q", in, cut, got, want)
			}
		}
		tt := New(MaxLine)
		var out []byte
		for i := range len(in) {
			out = tt.Write(out, []byte{in[i]})
		}
		if got := string(tt.Close(out)); got != want {
			t.Fatalf("%q in one-byte writes: got %q, want %q", in, got, want)
		}
	}
}

func TestFlushReleasesPartialLine(t *testing.T) {
	tt := New(MaxLine)
	out := tt.Write(nil, []byte("Password: "))
	if len(out) != 0 || !tt.Holding() {
		t.Fatalf("a partial line was released at once (%q) or not held", out)
	}
	out = tt.Flush(out)
	if string(out) != "Password: " || tt.Holding() {
		t.Fatalf("Flush released %q, holding %v", out, tt.Holding())
	}
	out = tt.Write(out, []byte("ok\n"))
	if string(out) != "Password: ok\n" {
		t.Fatalf("got %q", out)
	}
	if tt.Removed() != 0 {
		t.Errorf("Removed = %d, want 0", tt.Removed())
	}
}

func TestRedrawnLineHeldUntilItEnds(t *testing.T) {
	tt := New(MaxLine)
	out := tt.Write(nil, []byte("\r  1%"))
	if tt.Holding() {
		t.Fatal("a line being redrawn is offered to Flush")
	}
	for i := 2; i <= 200; i++ {
		out = tt.Write(out, []byte("\r"+strings.Repeat(" ", 3-len(itoa(i)))+itoa(i)+"%"))
	}
	out = tt.Write(out, []byte("\n"))
	if string(out) != "200%\n" {
		t.Fatalf("got %q", out)
	}
}

func TestReleasedThenRedrawn(t *testing.T) {
	tt := New(MaxLine)
	out := tt.Flush(tt.Write(nil, []byte("  0% |     |")))
	out = tt.Write(out, []byte("\r 50% |##   |\r100% |#####|\n"))
	if want := "  0% |     |\n100% |#####|\n"; string(out) != want {
		t.Fatalf("got %q, want %q", out, want)
	}
	tt = New(MaxLine)
	out = tt.Flush(tt.Write(nil, []byte("Downloading... ")))
	out = tt.Write(out, []byte("\rDownloading... done\n"))
	if want := "Downloading... done\n"; string(out) != want {
		t.Fatalf("got %q, want %q", out, want)
	}
}

func TestLineCap(t *testing.T) {
	tt := New(MinLine)
	in := strings.Repeat("é", 1000) // 2000 bytes, no newline
	out := tt.Write(nil, []byte(in))
	if len(tt.line) > MinLine {
		t.Fatalf("the line grew to %d bytes past the cap %d", len(tt.line), MinLine)
	}
	out = tt.Close(out)
	if got := strings.ReplaceAll(string(out), "\n", ""); got != in {
		t.Fatalf("text lost at the cap: %d bytes of %d", len(got), len(in))
	}
	for _, l := range strings.Split(string(out), "\n") {
		if len(l) > MinLine {
			t.Fatalf("a line of %d bytes past the cap", len(l))
		}
	}
}

func TestSuspectAndBinary(t *testing.T) {
	tt := New(MaxLine)
	tt.Suspect()
	out := tt.Write(nil, []byte("line\n"))
	if len(out) != 0 || !tt.Holding() {
		t.Fatalf("suspect text released: %q", out)
	}
	if out = tt.Trust(out); string(out) != "line\n" {
		t.Fatalf("Trust released %q", out)
	}
	tt.Suspect()
	out = tt.Write(out, []byte("\uFFFD\uFFFD ELF\n"))
	tt.MarkBinary()
	out = tt.Write(out, []byte("more\n"))
	out = tt.Close(out)
	out = tt.CloseBinary(out, 1234, []byte{0x7f, 'E', 'L', 'F'})
	if want := "line\n[binary output: 1234 bytes; starts 7f 45 4c 46 …]\n"; string(out) != want {
		t.Fatalf("got %q, want %q", out, want)
	}
	if got, want := tt.Removed(), int64(len("line\n\uFFFD\uFFFD ELF\nmore\n")-len(out)); got != want {
		t.Errorf("Removed = %d, want %d", got, want)
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
