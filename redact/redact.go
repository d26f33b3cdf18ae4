package redact

import (
	"fmt"
	"regexp"
	"strings"
)

// MaxHold is how much of a line in progress a Stream holds back before it
// releases all of it but the last MaxToken bytes.
const MaxHold = 8 << 10

// MaxToken is the longest secret (other than a PEM block) a Stream is sure
// to catch inside a line longer than MaxHold.
const MaxToken = 1 << 10

// maxPEM bounds the lines of a PEM block held back: past it the whole
// block so far is redacted and the rest dropped until its END line.
const maxPEM = 64 << 10

// Pattern is one kind of secret: Name appears in the replacement text,
// "[REDACTED:name]".
type Pattern struct {
	Name string
	Re   *regexp.Regexp
	// hints are lowercase strings one of which every match contains
	// (lowercased): text holding none of them is not searched. None means
	// always search (user patterns).
	hints []string
}

// Builtin are the token shapes --redact always looks for.
var Builtin = []Pattern{
	{"aws-access-key-id", regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`), []string{"akia", "asia", "abia", "acca"}},
	{"aws-secret-access-key", regexp.MustCompile(`(?i)aws_?secret_?access_?key["']?[ \t]*[:=][ \t]*["']?[A-Za-z0-9/+=]{40}\b`), []string{"secret"}},
	{"github-token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`), []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}},
	{"gitlab-token", regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{20,}`), []string{"glpat-"}},
	{"slack-token", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), []string{"xox"}},
	{"slack-webhook", regexp.MustCompile(`https://hooks\.slack\.com/services/[A-Za-z0-9_/]+`), []string{"hooks.slack.com"}},
	{"bearer-token", regexp.MustCompile(`(?i)\bbearer[ \t]+[A-Za-z0-9\-._~+/]{16,}=*`), []string{"bearer"}},
}

var (
	pemBegin = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----`)
	pemEnd   = regexp.MustCompile(`-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----`)
)

const pemName = "private-key"

// Compile turns user patterns (Go regexp syntax, RE2) into Patterns named
// "custom"; an invalid one is an error that quotes it.
func Compile(exprs []string) ([]Pattern, error) {
	out := make([]Pattern, 0, len(exprs))
	for _, e := range exprs {
		if e == "" {
			return nil, fmt.Errorf("redact pattern must not be empty (got %q)", e)
		}
		re, err := regexp.Compile(e)
		if err != nil {
			return nil, fmt.Errorf("redact pattern %q does not compile: %v", e, err)
		}
		if re.MatchString("") {
			return nil, fmt.Errorf("redact pattern %q matches the empty string", e)
		}
		out = append(out, Pattern{Name: "custom", Re: re})
	}
	return out, nil
}

// Stream redacts one stream of text. It is not safe for concurrent use;
// each output stream has its own.
type Stream struct {
	patterns []Pattern
	held     strings.Builder // text of the line in progress (or of a PEM block)
	inPEM    bool            // held starts with a PEM BEGIN line whose END has not come
	dropping bool            // a PEM block outgrew maxPEM: drop text until its END
	count    int
}

// New returns a Stream that looks for patterns (and PEM private keys).
func New(patterns []Pattern) *Stream {
	return &Stream{patterns: patterns}
}

// Count is how many secrets the Stream has replaced so far.
func (s *Stream) Count() int { return s.count }

// Write adds text and returns what may be released now, redacted.
func (s *Stream) Write(text string) string {
	if out, ok := s.writeLines(text); ok {
		return out
	}
	var out strings.Builder
	for text != "" {
		i := strings.IndexAny(text, "\n\r")
		if i < 0 {
			s.held.WriteString(text)
			break
		}
		s.held.WriteString(text[:i+1])
		text = text[i+1:]
		out.WriteString(s.line())
	}
	switch {
	case s.inPEM && s.held.Len() > maxPEM:
		s.held.Reset()
		s.inPEM, s.dropping = false, true
		out.WriteString(s.replacement(pemName))
	case s.dropping && s.held.Len() > MaxHold:
		h := s.held.String() // keep enough to see an END line straddle writes
		s.held.Reset()
		s.held.WriteString(h[len(h)-64:])
	case !s.inPEM && !s.dropping && s.held.Len() > MaxHold:
		out.WriteString(s.releaseLong())
	}
	return out.String()
}

// writeLines is Write's fast path for the common case, no PEM block held
// or beginning: every complete line of held+text is redacted in one pass
// of each pattern (the built-in patterns never match across a line end),
// and the line in progress is held. It reports false when the text needs
// the line-by-line path.
func (s *Stream) writeLines(text string) (string, bool) {
	if s.inPEM || s.dropping {
		return "", false
	}
	i := strings.LastIndexAny(text, "\n\r")
	if i < 0 {
		return "", false
	}
	block := s.held.String() + text[:i+1]
	if strings.Contains(block, "-----BEGIN") {
		return "", false // perhaps a PEM block: the line-by-line path knows them
	}
	s.held.Reset()
	s.held.WriteString(text[i+1:])
	out := s.patternsIn(block)
	if s.held.Len() > MaxHold {
		out += s.releaseLong()
	}
	return out, true
}

// Close releases everything held, redacted: the stream has ended.
func (s *Stream) Close() string {
	h := s.held.String()
	s.held.Reset()
	if s.dropping {
		s.dropping = false
		return "" // the block was already replaced when it outgrew maxPEM
	}
	s.inPEM = false
	return s.redact(h) // an unfinished PEM block is redacted to the end
}

// line handles one complete line at the end of held.
func (s *Stream) line() string {
	h := s.held.String()
	switch {
	case s.dropping:
		s.held.Reset()
		if loc := pemEnd.FindStringIndex(h); loc != nil {
			s.dropping = false
			return s.redact(h[loc[1]:]) // the block was replaced when it outgrew maxPEM
		}
		return ""
	case s.inPEM:
		if pemEnd.MatchString(lastLine(h)) {
			s.held.Reset()
			s.inPEM = false
			return s.afterPEM(h)
		}
		if len(h) > maxPEM {
			s.held.Reset()
			s.inPEM, s.dropping = false, true
			return s.replacement(pemName)
		}
		return ""
	}
	if loc := pemBegin.FindStringIndex(h); loc != nil {
		if end := pemEnd.FindStringIndex(h[loc[1]:]); end == nil {
			s.held.Reset()
			s.held.WriteString(h[loc[0]:])
			s.inPEM = true
			return s.redact(h[:loc[0]])
		}
	}
	s.held.Reset()
	return s.redact(h)
}

// afterPEM redacts a held text that ends with a PEM END line.
func (s *Stream) afterPEM(h string) string {
	loc := pemEnd.FindStringIndex(h)
	return s.replacement(pemName) + s.redact(h[loc[1]:])
}

// releaseLong releases a line longer than MaxHold but its last MaxToken
// bytes, never inside a match and never inside a code point.
func (s *Stream) releaseLong() string {
	h := s.held.String()
	cut := len(h) - MaxToken
	for _, p := range s.patterns {
		for _, m := range p.Re.FindAllStringIndex(h, -1) {
			if m[0] < cut && m[1] > cut {
				cut = m[0]
			}
		}
	}
	for cut > 0 && h[cut]&0xC0 == 0x80 {
		cut--
	}
	s.held.Reset()
	s.held.WriteString(h[cut:])
	return s.redact(h[:cut])
}

// redact replaces every match of every pattern in text, PEM blocks whole
// (a block with no END, at the end of a stream, is redacted to the end).
func (s *Stream) redact(text string) string {
	var out strings.Builder
	for {
		loc := pemBegin.FindStringIndex(text)
		if loc == nil {
			break
		}
		out.WriteString(s.patternsIn(text[:loc[0]]))
		out.WriteString(s.replacement(pemName))
		end := pemEnd.FindStringIndex(text[loc[1]:])
		if end == nil {
			return out.String()
		}
		text = text[loc[1]+end[1]:]
	}
	out.WriteString(s.patternsIn(text))
	return out.String()
}

// patternsIn replaces the matches of every one-line pattern in text.
// A pattern whose hints text does not hold is not searched: the
// lowercased text is made once, before any replacement (a replacement,
// "[REDACTED:name]", adds no hint of a later pattern).
func (s *Stream) patternsIn(text string) string {
	lower := ""
	for _, p := range s.patterns {
		if len(p.hints) > 0 {
			if lower == "" {
				lower = strings.ToLower(text)
			}
			if !containsAny(lower, p.hints) {
				continue
			}
		}
		text = p.Re.ReplaceAllStringFunc(text, func(string) string { return s.replacement(p.Name) })
	}
	return text
}

// replacement counts one secret and returns the text that stands for it.
func (s *Stream) replacement(name string) string {
	s.count++
	return "[REDACTED:" + name + "]"
}

func lastLine(h string) string {
	t := strings.TrimRight(h, "\r\n")
	if i := strings.LastIndexAny(t, "\r\n"); i >= 0 {
		return t[i+1:]
	}
	return t
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
