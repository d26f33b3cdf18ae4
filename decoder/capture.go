package decoder

import (
	"sync"

	"github.com/shellsup/shellsup/request"
)

// Capture owns the one budget that stdout and stderr share, and the text captured under it.
//
// Text is taken in arrival order across both streams, up to the budget minus the marker, which is
// reserved up front. When a stream's newly decoded text does not fit, its largest prefix that ends
// on a whole code point is taken, then [request.Marker] is appended to that stream, once. From then on the
// Capture is spent: nothing more is captured on either stream, and Write only counts raw bytes.
// The captured text of both streams together, marker included, never exceeds the budget.
//
// A Capture is safe for concurrent use, typically by one reader goroutine per stream. Create one
// with [NewCapture]; the zero value is not usable. Methods taking a [Stream] panic if it is neither
// [Stdout] nor [Stderr].
type Capture struct {
	mu      sync.Mutex
	marker  string
	room    int        // text bytes that may still be captured before the marker
	spent   bool       // the marker has been emitted
	dec     [2]Decoder // one per stream
	text    [2][]byte  // captured text per stream, marker included
	raw     [2]int64   // raw bytes read (or discarded) per stream
	scratch []byte     // decoded text of the current call, reused
}

// Totals is the accounting of a [Capture] at one moment.
type Totals struct {
	Stdout, Stderr string // captured text, the marker at the end of the stream that overflowed
	Truncated      bool   // the marker was emitted
	TotalBytes     int64  // raw bytes read from both pipes, captured or not
	CapturedBytes  int64  // len(Stdout) + len(Stderr), at most the budget
	StdoutBytes    int64  // raw bytes of stdout (part of TotalBytes)
	StderrBytes    int64  // raw bytes of stderr
}

// NewCapture returns an empty Capture for budget. If budget fails [ValidateBudget], it returns
// that *[BudgetError].
func NewCapture(budget int) (*Capture, error) {
	if err := ValidateBudget(budget); err != nil {
		return nil, err // already says what was wrong, with the package prefix
	}
	m := request.Marker(budget)
	return &Capture{marker: m, room: budget - len(m)}, nil
}

// Write counts the raw bytes p read from stream s, decodes them with s's [Decoder], and returns the
// text newly captured for s: the part that fits the budget, followed by the marker if this call
// overflowed it. It returns "" when nothing new was captured, and always "" once the Capture is
// spent.
//
// Two goroutines calling Write cannot tell from the results which capture came first; a caller
// that forwards captured text while both streams are read should use [Capture.WriteFunc].
func (c *Capture) Write(s Stream, p []byte) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.write(s, p))
}

// WriteFunc is [Capture.Write] that hands the new text to emit instead of returning it. emit is
// called under the Capture's lock, at most once per call, never with "", so emits across
// goroutines happen in exactly the order the text was captured. A call that overflows the budget
// emits its fitting text and the marker together in that one call. Joining all texts emitted for
// a stream gives that stream's captured text. emit must not call methods of c.
func (c *Capture) WriteFunc(s Stream, p []byte, emit func(s Stream, text string)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.write(s, p); len(t) > 0 {
		emit(s, string(t))
	}
}

// Close flushes stream s's decoder at EOF through the same budget and returns any new text: one
// U+FFFD for a sequence left incomplete, possibly followed by the marker.
func (c *Capture) Close(s Stream) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.close(s))
}

// CloseFunc is [Capture.Close] that hands the new text to emit, on the terms of
// [Capture.WriteFunc].
func (c *Capture) CloseFunc(s Stream, emit func(s Stream, text string)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.close(s); len(t) > 0 {
		emit(s, string(t))
	}
}

// WriteTextFunc is the seam for a caller that decodes (and perhaps rewrites, redacting secrets)
// the text itself: it counts raw raw bytes of stream s and captures text, which must be valid
// UTF-8, through the budget exactly as [Capture.WriteFunc] captures what its own decoder returns.
// The caller keeps its own [Decoder] per stream and passes what Flush returns at EOF the same way
// (with raw 0); it must not mix this with Write or Close on the same stream.
func (c *Capture) WriteTextFunc(s Stream, raw int, text []byte, emit func(s Stream, text string)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.raw[s] += int64(raw)
	if c.spent || len(text) == 0 {
		return
	}
	if t := c.take(s, text); len(t) > 0 {
		emit(s, string(t))
	}
}

// Discard counts n raw bytes of stream s that the caller drained without passing them to Write,
// which it may do once the Capture is [Capture.Spent] (for example by splicing the pipe to
// /dev/null). They count toward TotalBytes only.
func (c *Capture) Discard(s Stream, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.raw[s] += int64(n)
}

// Spent reports whether the marker has been emitted. After that, Write only counts bytes.
func (c *Capture) Spent() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.spent
}

// Raw is the number of raw bytes read (or discarded) from both streams so
// far: TotalBytes without the copy of the text that Totals makes.
func (c *Capture) Raw() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.raw[Stdout] + c.raw[Stderr]
}

// Totals returns a snapshot of the captured text and the byte counts.
func (c *Capture) Totals() Totals {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Totals{
		Stdout:        string(c.text[Stdout]),
		Stderr:        string(c.text[Stderr]),
		Truncated:     c.spent,
		TotalBytes:    c.raw[Stdout] + c.raw[Stderr],
		CapturedBytes: int64(len(c.text[Stdout]) + len(c.text[Stderr])),
		StdoutBytes:   c.raw[Stdout],
		StderrBytes:   c.raw[Stderr],
	}
}

// write counts and decodes p, and returns the newly captured text of s (a view into c.text[s],
// valid until the next call). c.mu must be held.
func (c *Capture) write(s Stream, p []byte) []byte {
	c.raw[s] += int64(len(p))
	if c.spent || len(p) == 0 {
		return nil
	}
	// Every byte of p except a held-back tail of at most 3 decodes to at least one byte of text,
	// and decoding a prefix of p gives a prefix of the text. So room+4 bytes are enough to
	// overflow, and the rest of a large chunk need not be decoded: nothing after it is captured.
	if len(p) > c.room+4 {
		p = p[:c.room+4]
	}
	c.scratch = c.dec[s].Decode(c.scratch[:0], p)
	return c.take(s, c.scratch)
}

// close flushes s's decoder and returns the newly captured text of s. c.mu must be held.
func (c *Capture) close(s Stream) []byte {
	if c.spent {
		return nil
	}
	c.scratch = c.dec[s].Flush(c.scratch[:0])
	return c.take(s, c.scratch)
}

// take captures the longest prefix of the decoded text that fits, and the marker if text did not
// fit whole. It returns what it added to c.text[s].
func (c *Capture) take(s Stream, text []byte) []byte {
	start := len(c.text[s])
	if len(text) <= c.room {
		c.text[s] = append(c.text[s], text...)
		c.room -= len(text)
		return c.text[s][start:]
	}
	n := cut(text, c.room)
	c.text[s] = append(c.text[s], text[:n]...)
	c.text[s] = append(c.text[s], c.marker...)
	c.room = 0
	c.spent = true
	c.scratch = nil // nothing more is decoded
	return c.text[s][start:]
}

// cut returns the length of the longest prefix of valid UTF-8 text that is at most n bytes and
// ends on a whole code point. n must be less than len(text).
func cut(text []byte, n int) int {
	for n > 0 && text[n]&0xC0 == 0x80 { // text[n] continues the code point before it
		n--
	}
	return n
}

// Stats returns what stream s's decoder has seen: the raw bytes decoded (those captured, up to
// the point where the Capture was spent), and how many of them were lost to U+FFFD.
func (c *Capture) Stats(s Stream) Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dec[s].Stats()
}
