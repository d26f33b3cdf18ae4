package tidy

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// tidyAll runs text through a fresh Tidier in one write and closes it.
func tidyAll(text string) string {
	t := New(MaxLine)
	out := t.Write(nil, []byte(text))
	return string(t.Close(out))
}

func TestRuneCount(t *testing.T) {
	for _, s := range []string{"", "a", "é", "ascii only here", "███░░ ▍ 42%", "日本語のテキストです", "\U0001F600 x \U0001F600\U0001F600"} {
		if got, want := runeCount([]byte(s)), utf8.RuneCountInString(s); got != want {
			t.Errorf("runeCount(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestTidy(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain", "hello\nworld\n", "hello\nworld\n"},
		{"plain partial at close", "a\nb", "a\nb"},
		{"sgr colour", "\x1b[1;31mred\x1b[0m plain\n", "red plain\n"},
		{"csi private", "\x1b[?25lhidden cursor\x1b[?25h\n", "hidden cursor\n"},
		{"osc title bel", "\x1b]0;title\x07text\n", "text\n"},
		{"osc title st", "\x1b]2;title\x1b\\text\n", "text\n"},
		{"osc 8 hyperlink", "\x1b]8;;file:///tmp/x\x1b\\x\x1b]8;;\x1b\\ y\n", "x y\n"},
		{"osc unterminated before newline", "\x1b]0;oops\nnext\n", "\nnext\n"},
		{"dcs", "a\x1bPq#0;2;0;0;0#0~~@@\x1b\\b\n", "ab\n"},
		{"apc pm sos", "\x1b_apc\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\ok\n", "ok\n"},
		{"charset", "\x1b(B\x1b)0\x1b#8abc\n", "abc\n"},
		{"two-char", "\x1b7\x1b8\x1b=\x1b>\x1bMok\n", "ok\n"},
		{"single shifts", "\x1bNa\x1bOb\n", "ab\n"},
		{"c0 controls", "a\x00b\x07c\x0bd\x0ce\x7ff\n", "abcdef\n"},
		{"tab kept", "a\tb\n", "a\tb\n"},
		{"c1 csi", "\u009b31mred\u009b0m\n", "red\n"},
		{"c1 osc", "\u009d0;title\u009cok\n", "ok\n"},
		{"latin1 kept", "café ©\u00a0x\n", "café ©\u00a0x\n"},
		{"carriage return redraw", "10%\r20%\r100%\n", "100%\n"},
		{"crlf", "one\r\ntwo\r\n", "one\ntwo\n"},
		{"cr shorter redraw", "abcdef\rxy\n", "xycdef\n"},
		{"cr with erase", "abcdef\rxy\x1b[K\n", "xy\n"},
		{"erase whole line", "abcdef\x1b[2K\rxy\n", "xy\n"},
		{"erase to start", "abcdef\x1b[3D\x1b[1K\n", "    ef\n"},
		{"cha", "abcdef\x1b[1Gxy\n", "xycdef\n"},
		{"cuf pads", "ab\x1b[3Cc\n", "ab   c\n"},
		{"backspace", "abc\b\bX\n", "aXc\n"},
		{"backspace at start", "\b\bab\n", "ab\n"},
		{"overwrite multibyte", "███░░\r██\n", "███░░\n"},
		{"multibyte over ascii", "-----\r██\n", "██---\n"},
		{"ascii over multibyte", "ééé\rab\n", "abé\n"},
		{"cleared line trimmed", "progress 50%\r            \rdone\n", "done\n"},
		{"fold", strings.Repeat("waiting for the lock\n", 10) + "y\n", "waiting for the lock\n… (same line 9 more times)\ny\n"},
		{"short lines not folded", "x\nx\nx\nx\ny\n", "x\nx\nx\nx\ny\n"},
		{"fold at close", strings.Repeat("same line here\n", 5), "same line here\n… (same line 4 more times)\n"},
		{"fold not when longer", "a\na\na\nb\n", "a\na\na\nb\n"},
		{"two repeats kept", "long line one\nlong line one\nb\n", "long line one\nlong line one\nb\n"},
		{"escape at close dropped", "ab\x1b[3", "ab"},
		{"esc then text", "\x1b\x1bab\n", "b\n"},
		{"csi aborted by esc", "\x1b[12\x1b[31mx\n", "x\n"},
		{"newline inside csi executes", "a\x1b[1\nb\n", "a\n\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := tidyAll(c.in); got != c.want {
				t.Errorf("tidy(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}
