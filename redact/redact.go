package redact

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// MaxHold is how much of a line in progress a Stream holds back before it
// releases all of it but the last MaxToken bytes.
const MaxHold = 8 << 10

// MaxToken is the longest secret (other than a PEM block) a Stream is sure
// to catch inside a line longer than MaxHold.
const MaxToken = 1 << 10

// maxPEM bounds the text of a PEM block held back: past it the whole
// block so far is redacted and the rest dropped until its END line.
const maxPEM = 64 << 10

// maxBlanks is how many spaces and tabs may stand between a secret's name
// and its value (after the ":" or "="): the value of a name farther away
// is not taken for it, in a line of any length (so a match never spans more
// than a name, its quotes, maxBlanks blanks and the value).
const maxBlanks = 64

// endOverlap is how far back a search for a PEM END line starts in text
// already searched, so an END line split across writes is found.
const endOverlap = 128

// contPrefix is how much of a match that outgrew MaxHold a Stream keeps, to
// tell whether the text that follows still continues it.
const contPrefix = 256

// Pattern is one kind of secret: Name appears in the replacement text,
// "[REDACTED:name]".
type Pattern struct {
	Name string
	Re   *regexp.Regexp
	// hints are lowercase strings one of which every match contains
	// (lowercased): text holding none of them is not searched. None means
	// always search (user patterns).
	hints []string
	// keepName: the first group (a variable's name and its "=") is kept,
	// only the rest of the match is replaced.
	keepName bool
}

// Builtin are the token shapes --redact always looks for. They are
// compiled at the first call, not at every start of shellsup (0.74 ms of
// package init in a run without --redact).
var Builtin = sync.OnceValue(func() []Pattern {
	return []Pattern{
		{"aws-access-key-id", regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`), []string{"akia", "asia", "abia", "acca"}, false},
		{"aws-secret-access-key", regexp.MustCompile(`(?i)(?:aws_?)?secret_?access_?key["']?[ \t]{0,64}[:=][ \t]{0,64}["']?[A-Za-z0-9/+=]{40}\b`), []string{"secret"}, false},
		{"github-token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`), []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, false},
		{"gitlab-token", regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{20,}`), []string{"glpat-"}, false},
		{"slack-token", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), []string{"xox"}, false},
		{"slack-webhook", regexp.MustCompile(`https://hooks\.slack\.com/services/[A-Za-z0-9_/]+`), []string{"hooks.slack.com"}, false},
		{"bearer-token", regexp.MustCompile(`(?i)\bbearer[ \t]+[A-Za-z0-9\-._~+/]{16,}=*`), []string{"bearer"}, false},
		{"anthropic-key", regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_\-]{20,}`), []string{"sk-ant-"}, false},
		{"openai-key", regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}`), []string{"sk-"}, false},
		// NAME=value and NAME: value where NAME says it holds a secret
		// (DB_PASSWORD=…, "api_key": "…", GITHUB_TOKEN=…): the name is kept,
		// the value replaced.
		{Name: "secret-value", Re: regexp.MustCompile(`(?i)(\b[A-Z0-9_.\-]*(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|AUTH_?KEY|CREDENTIALS?)[A-Z0-9_.\-]*["']?[ \t]{0,64}[:=][ \t]{0,64}["']?)[^\s"'\[]{8,}`),
			hints: []string{"pass", "secret", "token", "key", "credential"}, keepName: true},
	}
})

var (
	pemBegin = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----`) })
	pemEnd   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----`) })
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
//
// Its work is linear in the text: it never holds more than MaxHold bytes
// of a line (maxPEM of a PEM block), and each byte is searched a bounded
// number of times. A match still growing when the held line outgrows
// MaxHold (a "token" of megabytes) is replaced from its start, and the text
// that continues it is dropped as it comes, until it ends.
type Stream struct {
	patterns []Pattern
	held     strings.Builder // text of the line in progress (or of a PEM block)
	inPEM    bool            // held starts with a PEM BEGIN line whose END has not come
	dropping bool            // a PEM block outgrew maxPEM: drop text until its END
	endFrom  int             // in a block: held[:endFrom] was searched for END
	cont     *Pattern        // a match that outgrew MaxHold continues: drop what extends it
	contText string          // its first contPrefix bytes
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
	if text = s.continueMatch(text); text == "" {
		return ""
	}
	if out, ok := s.writeLines(text); ok {
		return out
	}
	var out strings.Builder
	for text != "" {
		piece := text
		i := strings.IndexAny(text, "\n\r")
		if i >= 0 {
			piece = text[:i+1]
		}
		text = text[len(piece):]
		s.held.WriteString(piece)
		if s.inBlock() {
			out.WriteString(s.blockEnd())
		}
		if i >= 0 && !s.inBlock() {
			out.WriteString(s.line())
		}
	}
	out.WriteString(s.bound())
	return out.String()
}

func (s *Stream) inBlock() bool { return s.inPEM || s.dropping }

// writeLines is Write's fast path for the common case, no PEM block held
// or beginning: every complete line of held+text is redacted in one pass
// of each pattern (the built-in patterns never match across a line end),
// and the line in progress is held. It reports false when the text needs
// the piece-by-piece path.
func (s *Stream) writeLines(text string) (string, bool) {
	if s.inBlock() {
		return "", false
	}
	i := strings.LastIndexAny(text, "\n\r")
	if i < 0 {
		return "", false
	}
	block := s.held.String() + text[:i+1]
	if strings.Contains(block, "-----BEGIN") {
		return "", false // perhaps a PEM block: the piece-by-piece path knows them
	}
	s.held.Reset()
	s.held.WriteString(text[i+1:])
	out := s.patternsIn(block)
	return out + s.bound(), true
}

// Close releases everything held, redacted: the stream has ended.
func (s *Stream) Close() string {
	h := s.held.String()
	s.held.Reset()
	s.cont = nil
	if s.dropping {
		s.dropping = false
		return "" // the block was already replaced when it outgrew maxPEM
	}
	if s.inPEM {
		s.inPEM = false
		return s.replacement(pemName) // an unfinished PEM block is redacted to the end
	}
	return s.redact(h)
}

// line handles one complete line, the whole of held, outside a block: a
// BEGIN without its END starts a block.
func (s *Stream) line() string {
	h := s.held.String()
	if loc := unclosedBegin(h); loc != nil {
		return s.startBlock(h, loc)
	}
	s.held.Reset()
	return s.redact(h)
}

// startBlock releases h up to the BEGIN at loc, redacted, and holds the
// rest as a PEM block in progress.
func (s *Stream) startBlock(h string, loc []int) string {
	s.held.Reset()
	s.held.WriteString(h[loc[0]:])
	s.inPEM, s.endFrom = true, loc[1]-loc[0]
	return s.redact(h[:loc[0]])
}

// unclosedBegin is the location of a PEM BEGIN line in h with no END line
// after it, or nil.
func unclosedBegin(h string) []int {
	off := 0
	for {
		loc := pemBegin().FindStringIndex(h[off:])
		if loc == nil {
			return nil
		}
		end := pemEnd().FindStringIndex(h[off+loc[1]:])
		if end == nil {
			return []int{off + loc[0], off + loc[1]}
		}
		off += loc[1] + end[1]
	}
}

// blockEnd ends the block held if its END line has come (searching only
// what was not searched before), holding what follows the END; it returns
// the block's replacement (none for a block already replaced).
func (s *Stream) blockEnd() string {
	h := s.held.String()
	from := max(s.endFrom-endOverlap, 0)
	loc := pemEnd().FindStringIndex(h[from:])
	if loc == nil {
		s.endFrom = len(h)
		return ""
	}
	s.held.Reset()
	s.held.WriteString(h[from+loc[1]:])
	out := ""
	if s.inPEM {
		out = s.replacement(pemName)
	}
	s.inPEM, s.dropping, s.endFrom = false, false, 0
	return out
}

// bound keeps what is held within its bounds: a PEM block past maxPEM is
// replaced and dropped from then on, the dropped text keeps only enough to
// see its END, and a line past MaxHold is released but its last bytes.
func (s *Stream) bound() string {
	switch {
	case s.inPEM && s.held.Len() > maxPEM:
		s.inPEM, s.dropping = false, true
		s.keepTail()
		return s.replacement(pemName)
	case s.dropping && s.held.Len() > MaxHold:
		s.keepTail()
	case !s.inBlock() && s.held.Len() > MaxHold:
		return s.releaseLong()
	}
	return ""
}

// keepTail drops the held text of a block being dropped but its last
// endOverlap bytes, where an END line may have begun.
func (s *Stream) keepTail() {
	h := s.held.String()
	s.held.Reset()
	s.held.WriteString(h[max(len(h)-endOverlap, 0):])
	s.endFrom = s.held.Len()
}

// releaseLong releases a line longer than MaxHold but its last MaxToken
// bytes, never inside a match and never inside a code point. A BEGIN
// without END in it starts a block; a match running to the end of the line
// that is already longer than MaxHold is replaced now, and what continues
// it is dropped as it comes.
func (s *Stream) releaseLong() string {
	h := s.held.String()
	if loc := unclosedBegin(h); loc != nil {
		return s.startBlock(h, loc)
	}
	ms := make([]match, 0, 8)
	for i := range s.patterns {
		p := &s.patterns[i]
		for _, m := range p.Re.FindAllStringIndex(h, -1) {
			if m[1] == len(h) && len(h)-m[0] > MaxHold {
				return s.startContinuation(h, p, m[0])
			}
			ms = append(ms, match{m[0], m[1]})
		}
	}
	cut := releasePoint(ms, len(h))
	for cut > 0 && cut < len(h) && h[cut]&0xC0 == 0x80 {
		cut--
	}
	s.held.Reset()
	s.held.WriteString(h[cut:])
	return s.redact(h[:cut])
}

// match is where one pattern matched: [start, end).
type match struct{ start, end int }

// releasePoint is where a long line of length n is cut: MaxToken bytes
// before its end, moved past every complete match that straddles it (to a
// fixpoint: a match of one pattern can start inside another's and end after
// it), then back before every match that may still grow (it runs to the
// end) and every match the cut would split. It never goes back further
// than MaxHold from the end: a chain of overlapping matches longer than
// that is cut (the non-goal of the package doc).
func releasePoint(ms []match, n int) int {
	cut := n - MaxToken
	for moved := true; moved; {
		moved = false
		for _, m := range ms {
			if m.start < cut && m.end > cut && m.end < n {
				cut, moved = m.end, true
			}
		}
	}
	floor := n - MaxHold
	for _, m := range ms {
		if m.end == n {
			cut = max(min(cut, m.start), floor)
		}
	}
	for moved := true; moved; {
		moved = false
		for _, m := range ms {
			if m.start < cut && m.end > cut && m.start >= floor {
				cut, moved = m.start, true
			}
		}
	}
	return cut
}

// startContinuation releases h up to a match of p that starts at at and
// runs to the end of h, the match replaced, and drops from now on the text
// that continues it.
func (s *Stream) startContinuation(h string, p *Pattern, at int) string {
	out := s.redact(h[:at])
	name := s.replacement(p.Name)
	if p.keepName {
		if sub := p.Re.FindStringSubmatchIndex(h[at:]); sub != nil && sub[3] > 0 {
			name = h[at:at+sub[3]] + name
		}
	}
	s.held.Reset()
	s.cont, s.contText = p, h[at:at+min(contPrefix, len(h)-at)]
	return out + name
}

// continueMatch drops the start of text that continues a match replaced by
// startContinuation, and returns the rest ("" if all of text continues it).
// Each call searches at most contPrefix bytes besides text.
func (s *Stream) continueMatch(text string) string {
	if s.cont == nil {
		return text
	}
	probe := s.contText + text
	loc := s.cont.Re.FindStringIndex(probe)
	if loc == nil || loc[0] != 0 || loc[1] <= len(s.contText) {
		s.cont = nil
		return text
	}
	if loc[1] == len(probe) {
		return "" // all of it continues the match, which may go on
	}
	s.cont = nil
	return text[loc[1]-len(s.contText):]
}

// redact replaces every match of every pattern in text, PEM blocks whole
// (a block with no END, at the end of a stream, is redacted to the end).
func (s *Stream) redact(text string) string {
	var out strings.Builder
	for {
		loc := pemBegin().FindStringIndex(text)
		if loc == nil {
			break
		}
		out.WriteString(s.patternsIn(text[:loc[0]]))
		out.WriteString(s.replacement(pemName))
		end := pemEnd().FindStringIndex(text[loc[1]:])
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
	for i := range s.patterns {
		p := &s.patterns[i]
		if len(p.hints) > 0 {
			if lower == "" {
				lower = strings.ToLower(text)
			}
			if !containsAny(lower, p.hints) {
				continue
			}
		}
		text = s.replaceAll(p, text)
	}
	return text
}

// replaceAll replaces p's matches in text, keeping the name of a
// keepName pattern.
func (s *Stream) replaceAll(p *Pattern, text string) string {
	if !p.keepName {
		return p.Re.ReplaceAllStringFunc(text, func(string) string { return s.replacement(p.Name) })
	}
	ms := findValues(text)
	if ms == nil {
		return text
	}
	var out strings.Builder
	prev := 0
	for _, m := range ms {
		out.WriteString(text[prev:m[0]]) // up to the end of the name and its "="
		out.WriteString(s.replacement(p.Name))
		prev = m[1]
	}
	out.WriteString(text[prev:])
	return out.String()
}

// secretWords are the words that make a name a secret's (lowercase).
var secretWords = []string{"password", "passwd", "passphrase", "secret", "token", "apikey", "api_key", "api-key",
	"access_key", "accesskey", "private_key", "privatekey", "auth_key", "authkey", "credential"}

// findValues is the secret-value pattern's matcher, by hand for speed (its
// regexp, with a leading class run, searched log text at a tenth of the
// other patterns' speed): the values, as [start, end) pairs, of every
// NAME=value or NAME: value in text whose NAME holds a secret word, the
// value 8 or more characters other than space, quotes and "[". It finds
// what Re finds, and never more.
func findValues(text string) [][2]int {
	var out [][2]int
	for off := 0; ; {
		i := strings.IndexAny(text[off:], "=:")
		if i < 0 {
			return out
		}
		i += off
		off = i + 1
		if !secretName(text[:i]) {
			continue
		}
		v := i + 1
		if v < len(text) && (text[v] == '"' || text[v] == '\'') {
			v++
		}
		v += blanks(text[v:])
		if v < len(text) && (text[v] == '"' || text[v] == '\'') {
			v++
		}
		end := v
		for end < len(text) && !strings.ContainsRune(" \t\n\r\f\v\"'[", rune(text[end])) {
			end++
		}
		if end-v >= 8 {
			out = append(out, [2]int{v, end})
			off = end
		}
	}
}

// secretName reports whether the text before a "=" or ":" ends in a name
// (letters, digits, "_", ".", "-"; then an optional quote and blanks)
// holding a secret word.
func secretName(before string) bool {
	j := len(before)
	for n := 0; n < maxBlanks && j > 0 && (before[j-1] == ' ' || before[j-1] == '\t'); n++ {
		j--
	}
	if j > 0 && (before[j-1] == '"' || before[j-1] == '\'') {
		j--
	}
	k := j
	for k > 0 && isNameByte(before[k-1]) {
		k--
	}
	if k == j || j-k > 128 {
		return false
	}
	name := strings.ToLower(before[k:j])
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// blanks is how many spaces and tabs begin s, at most maxBlanks.
func blanks(s string) int {
	n := 0
	for n < maxBlanks && n < len(s) && (s[n] == ' ' || s[n] == '\t') {
		n++
	}
	return n
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

// replacement counts one secret and returns the text that stands for it.
func (s *Stream) replacement(name string) string {
	s.count++
	return "[REDACTED:" + name + "]"
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
