package redact

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const awsKey = "AKIAIOSFODNN7EXAMPLE"

// feed writes text in pieces cut at the given offsets and returns
// everything released, Close included.
func feed(s *Stream, text string, cuts ...int) string {
	var out strings.Builder
	prev := 0
	for _, c := range cuts {
		out.WriteString(s.Write(text[prev:c]))
		prev = c
	}
	out.WriteString(s.Write(text[prev:]))
	out.WriteString(s.Close())
	return out.String()
}

func TestBuiltinShapes(t *testing.T) {
	rows := []struct{ name, in, want string }{
		{"aws access key", "key=" + awsKey + "\n", "key=[REDACTED:aws-access-key-id]\n"},
		{"aws secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n", "[REDACTED:aws-secret-access-key]\n"},
		{"github classic", "ghp_" + strings.Repeat("a", 36) + " ok\n", "[REDACTED:github-token] ok\n"},
		{"github fine-grained", "github_pat_" + strings.Repeat("B", 30) + "\n", "[REDACTED:github-token]\n"},
		{"gitlab", "glpat-" + strings.Repeat("x", 20) + "\n", "[REDACTED:gitlab-token]\n"},
		{"slack", "xoxb-1234567890-abcdef\n", "[REDACTED:slack-token]\n"},
		{"bearer", "Authorization: Bearer abcdefghijklmnop.qrstuvwx\n", "Authorization: [REDACTED:bearer-token]\n"},
		{"pem", "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabcd\n-----END RSA PRIVATE KEY-----\nb\n", "a\n[REDACTED:private-key]\nb\n"},
		{"pem unfinished at EOF", "a\n-----BEGIN PRIVATE KEY-----\nMIIE", "a\n[REDACTED:private-key]"},
		{"nothing secret", "hello AKIA short\n", "hello AKIA short\n"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			assert.Equal(t, r.want, feed(New(Builtin()), r.in))
		})
	}
}

// TestSplitAnywhere cuts the text at every pair of offsets: the secret
// never gets out, and the output is the same as with one write.
func TestSplitAnywhere(t *testing.T) {
	text := "id " + awsKey + " é\n-----BEGIN EC PRIVATE KEY-----\nXYZ\n-----END EC PRIVATE KEY-----\ntail"
	want := feed(New(Builtin()), text)
	require.NotContains(t, want, awsKey)
	require.NotContains(t, want, "XYZ")
	for i := 0; i <= len(text); i++ {
		for j := i; j <= len(text); j++ {
			if !utf8.ValidString(text[:i]) || !utf8.ValidString(text[i:j]) {
				continue // the decoder hands over whole code points only
			}
			s := New(Builtin())
			got := feed(s, text, i, j)
			if got != want {
				t.Fatalf("cuts %d,%d: got %q, want %q", i, j, got, want)
			}
			assert.Equal(t, 2, s.Count())
		}
	}
}

func TestLongLineReleasedWithoutBreakingTokensOrCodePoints(t *testing.T) {
	s := New(Builtin())
	long := strings.Repeat("é", MaxHold) // 2 bytes each
	out := s.Write(long + awsKey[:10])
	assert.True(t, utf8.ValidString(out))
	assert.NotEmpty(t, out, "a line past MaxHold is released")
	out += s.Write(awsKey[10:] + "\n")
	assert.Equal(t, long+"[REDACTED:aws-access-key-id]\n", out)
}

func TestLinesReleasedWhenComplete(t *testing.T) {
	s := New(Builtin())
	assert.Equal(t, "", s.Write("partial"))
	assert.Equal(t, "partial line\n", s.Write(" line\nnext"))
	assert.Equal(t, "next\r", s.Write("\r"))
}

func TestHugePEMIsDroppedNotHeld(t *testing.T) {
	s := New(Builtin())
	out := s.Write("-----BEGIN PRIVATE KEY-----\n")
	for i := 0; i < 2*maxPEM/64; i++ {
		out += s.Write(strings.Repeat("A", 63) + "\n")
	}
	out += s.Write("-----END PRIVATE KEY-----\nafter\n")
	assert.Equal(t, "[REDACTED:private-key]\nafter\n", out)
	assert.LessOrEqual(t, s.held.Len(), MaxHold)
}

func TestCustomPatterns(t *testing.T) {
	ps, err := Compile([]string{`sk-[a-z0-9]{8}`})
	require.NoError(t, err)
	assert.Equal(t, "k=[REDACTED:custom]\n", feed(New(append(Builtin(), ps...)), "k=sk-abcd1234\n"))
	for _, bad := range []string{"(", "", "a*"} {
		_, err := Compile([]string{bad})
		require.Error(t, err)
		assert.Contains(t, err.Error(), `"`+bad+`"`)
	}
}

// BenchmarkShortLines is log-like output: many short lines, a secret now and then.
func BenchmarkShortLines(b *testing.B) {
	var chunk strings.Builder
	for chunk.Len() < 64<<10 {
		chunk.WriteString("2026-12-01 10:00:00 INFO request served in 3ms path=/api/items\n")
		if chunk.Len()%7 == 0 {
			chunk.WriteString("token " + awsKey + "\n")
		}
	}
	text := chunk.String()
	b.SetBytes(int64(len(text)))
	s := New(Builtin())
	for b.Loop() {
		s.Write(text)
	}
}

func TestNewShapes(t *testing.T) {
	openai := "sk-proj-" + strings.Repeat("Ab3_", 10)
	anthropic := "sk-ant-api03-" + strings.Repeat("xY9-", 10)
	rows := []struct{ name, in, want string }{
		{"aws json", `{"AccessKeyId": "` + awsKey + `", "SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}` + "\n",
			`{"AccessKeyId": "[REDACTED:aws-access-key-id]", "[REDACTED:aws-secret-access-key]"}` + "\n"},
		{"openai project key", "OPENAI=" + openai + " done\n", "OPENAI=[REDACTED:openai-key] done\n"},
		{"anthropic key", "key " + anthropic + "\n", "key [REDACTED:anthropic-key]\n"},
		{"env assignment", "DB_PASSWORD=hunter2hunter2 next\n", "DB_PASSWORD=[REDACTED:secret-value] next\n"},
		{"export with quotes", "export GITHUB_TOKEN='abcdefgh12345678'\n", "export GITHUB_TOKEN='[REDACTED:secret-value]'\n"},
		{"json api key", `{"api_key": "0123456789abcdef"}` + "\n", `{"api_key": "[REDACTED:secret-value]"}` + "\n"},
		{"yaml secret", "client_secret: s3cr3t-value-here\n", "client_secret: [REDACTED:secret-value]\n"},
		{"short value kept", "PASSWORD=abc\n", "PASSWORD=abc\n"},
		{"no secret word", "COUNT=1234567890\n", "COUNT=1234567890\n"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			assert.Equal(t, r.want, feed(New(Builtin()), r.in))
		})
	}
}

// TestNewShapesSplitAnywhere: the new shapes are caught however the text
// is cut into two writes.
func TestNewShapesSplitAnywhere(t *testing.T) {
	text := "x DB_PASSWORD=hunter2hunter2 sk-ant-" + strings.Repeat("q", 24) + " y\n"
	want := feed(New(Builtin()), text)
	require.NotContains(t, want, "hunter2")
	require.NotContains(t, want, "qqqq")
	for i := 0; i <= len(text); i++ {
		assert.Equal(t, want, feed(New(Builtin()), text, i), "cut at %d", i)
	}
}

// TestHugeTokenIsLinear: a "token" of 16 MiB in one line (Authorization:
// Bearer + 16 MiB of A) is replaced once, nothing of it leaks, and the
// stream never holds more than MaxHold plus one write of it: each byte is
// searched a bounded number of times (it took 100 s, quadratic, before).
func TestHugeTokenIsLinear(t *testing.T) {
	s := New(Builtin())
	var out strings.Builder
	out.WriteString(s.Write("Authorization: Bearer "))
	chunk := strings.Repeat("A", 64<<10)
	for i := 0; i < 256; i++ {
		out.WriteString(s.Write(chunk))
		require.LessOrEqual(t, s.held.Len(), MaxHold+len(chunk), "write %d", i)
	}
	out.WriteString(s.Write("\nnext line\n"))
	out.WriteString(s.Close())
	assert.Equal(t, "Authorization: [REDACTED:bearer-token]\nnext line\n", out.String())
	assert.Equal(t, 1, s.Count())
}

// TestPEMInsideOneLongLine: a private key inside one JSON line (its line
// ends escaped, "\n"), longer than MaxHold and written in two pieces, is
// replaced whole: none of its body leaks (1.1 KB did, past the
// replacement), and the text after its END line is kept.
func TestPEMInsideOneLongLine(t *testing.T) {
	body := strings.Repeat("MIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB", 160) // 10 KiB
	line := `{"name": "deploy", "key": "-----BEGIN RSA PRIVATE KEY-----\n` + body + `\n-----END RSA PRIVATE KEY-----\n", "after": "kept"}` + "\n"
	want := `{"name": "deploy", "key": "[REDACTED:private-key]\n", "after": "kept"}` + "\n"
	for _, cut := range []int{100, len(line) / 2, len(line) - 100, len(line) - 30} {
		got := feed(New(Builtin()), line, cut)
		assert.Equal(t, want, got, "cut at %d", cut)
		assert.NotContains(t, got, "MIIE", "cut at %d", cut)
	}
	// An unfinished block in a long line is held, never released.
	s := New(Builtin())
	out := s.Write(`{"key": "-----BEGIN PRIVATE KEY-----\n` + body)
	assert.Equal(t, `{"key": "`, out)
	assert.Equal(t, "[REDACTED:private-key]", s.Close())
}

// BenchmarkHugeToken is the 16 MiB bearer token of TestHugeTokenIsLinear.
func BenchmarkHugeToken(b *testing.B) {
	chunk := strings.Repeat("A", 64<<10)
	b.SetBytes(16 << 20)
	for b.Loop() {
		s := New(Builtin())
		s.Write("Authorization: Bearer ")
		for i := 0; i < 256; i++ {
			s.Write(chunk)
		}
		s.Close()
	}
}

// TestLongLineBlanksBeforeAValue: in a line longer than MaxHold, a name
// and its value far apart (the review's F4: 1 KiB of blanks after
// "PASSWORD=") once came out split, the value unredacted. A value more
// than maxBlanks blanks after its name is not taken for the name's value in
// any line (short lines included), and one within them is caught however
// the line is cut.
func TestLongLineBlanksBeforeAValue(t *testing.T) {
	const value = "hunter2hunter2hunter2"
	for _, blanks := range []int{1, maxBlanks} {
		line := strings.Repeat("x", MaxHold+500) + " DB_PASSWORD=" + strings.Repeat(" ", blanks) + value + " tail\n"
		for _, step := range []int{1, 7, 100, 1000, 4096} {
			var cuts []int
			for c := step; c < len(line); c += step {
				cuts = append(cuts, c)
			}
			out := feed(New(Builtin()), line, cuts...)
			assert.NotContains(t, out, value, "blanks %d, writes of %d", blanks, step)
			assert.Contains(t, out, "DB_PASSWORD=", "the name is kept")
		}
	}
	far := "DB_PASSWORD=" + strings.Repeat(" ", maxBlanks+1) + value + "\n"
	assert.Equal(t, far, feed(New(Builtin()), far), "too far: not a value, in a short line as in a long one")
	long := strings.Repeat("x", MaxHold+500) + " " + far
	assert.Equal(t, long, feed(New(Builtin()), long, MaxHold, MaxHold+300, MaxHold+500))
}

// TestLongLineOverlappingMatches: in a line longer than MaxHold, a match
// that starts inside another pattern's match straddling the release point
// (the review's F4) is released whole, never cut: no piece of either gets
// out unredacted.
func TestLongLineOverlappingMatches(t *testing.T) {
	// A secret value whose end ("-bearer") begins a bearer token: the
	// bearer match starts inside the secret-value match and ends after it.
	token := "abcdefghijklmnopqrstuv"
	secret := "MY_TOKEN=xxxxxxx-bearer " + token
	for pad := MaxHold - 1100; pad < MaxHold+200; pad += 7 {
		line := strings.Repeat("x", pad) + " " + secret + " end " + strings.Repeat("y", 2000) + "\n"
		for _, step := range []int{512, 1000, 4096} {
			var cuts []int
			for c := step; c < len(line); c += step {
				cuts = append(cuts, c)
			}
			out := feed(New(Builtin()), line, cuts...)
			assert.NotContains(t, out, token, "pad %d, writes of %d: %q", pad, step, out[max(0, pad-20):min(len(out), pad+200)])
		}
	}
}
