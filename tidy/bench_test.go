package tidy

import (
	"strings"
	"testing"
)

// mixed is text as a build log has it: plain lines, colour, a progress bar, a hyperlink.
func mixed(n int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		switch i % 8 {
		case 0:
			b.WriteString("\x1b[32mPASS\x1b[0m TestSomething/case_" + itoa(i) + " (0.00s)\n")
		case 1:
			b.WriteString("\r 42% |████████▍           | 42/100 [00:01<00:02, 41.9it/s]")
		case 2:
			b.WriteString("\r100% |████████████████████| 100/100 [00:02<00:00, 44.1it/s]\n")
		case 3:
			b.WriteString("\x1b]8;;file:///src/main.go\x1b\\main.go\x1b]8;;\x1b\\:12:3: warning: unused\n")
		default:
			b.WriteString("plain log line number " + itoa(i) + " with some ordinary words in it\n")
		}
	}
	return []byte(b.String()[:n])
}

func BenchmarkTidy(b *testing.B) {
	in := mixed(1 << 20)
	out := make([]byte, 0, len(in))
	b.SetBytes(int64(len(in)))
	t := New(64 << 10)
	for b.Loop() {
		for i := 0; i < len(in); i += 64 << 10 {
			out = t.Write(out[:0], in[i:min(i+64<<10, len(in))])
		}
	}
}

func BenchmarkTidyPlain(b *testing.B) {
	in := []byte(strings.Repeat("plain log line with some ordinary words in it, number 12345\n", 1<<20/60))
	out := make([]byte, 0, len(in))
	b.SetBytes(int64(len(in)))
	t := New(64 << 10)
	for b.Loop() {
		for i := 0; i < len(in); i += 64 << 10 {
			out = t.Write(out[:0], in[i:min(i+64<<10, len(in))])
		}
	}
}
