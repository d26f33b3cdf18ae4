package supervisor

import (
	"sync"
	"time"

	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/tidy"
)

// tidyPath is a stream's tidier (--tidy), between its decoder and its
// redactor. The reader and the hold timer both pass text through it, under
// mu: the timer releases a partial line that has waited tidy.HoldFor.
type tidyPath struct {
	mu     sync.Mutex
	t      *tidy.Tidier
	out    []byte
	head   [16]byte // the stream's first raw bytes, for a binary stream's line
	nhead  int
	timer  *time.Timer
	armed  bool
	closed bool
	binary bool // the verdict: the reader sinks the rest of the pipe
}

func newTidyPath(budget int) *tidyPath { return &tidyPath{t: tidy.New(budget)} }

// passDecoded hands one read's decoded text on: through the tidier first
// with --tidy, which may hold some of it.
func (p *pump) passDecoded(raw int, b, text []byte) {
	tp := p.text.tidy
	if tp == nil {
		p.passText(raw, text)
		return
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.nhead < len(tp.head) {
		tp.nhead += copy(tp.head[tp.nhead:], b)
	}
	tp.out = p.judge(tp.out[:0], false)
	tp.out = tp.t.Write(tp.out, text)
	p.passText(raw, tp.out)
	if !tp.armed && tp.t.Holding() {
		tp.armed = true
		if tp.timer == nil {
			tp.timer = time.AfterFunc(seamTidyHold(tidy.HoldFor), p.releaseHeld)
		} else {
			tp.timer.Reset(seamTidyHold(tidy.HoldFor))
		}
	}
}

// judge applies the decoder's binary verdict to the tidier (tp.mu held):
// a binary stream's text is dropped, that of a stream that may yet prove
// binary held, that of a text stream released. At EOF the verdict is final.
func (p *pump) judge(out []byte, eof bool) []byte {
	tp := p.text.tidy
	if tp.binary {
		return out
	}
	st := p.text.dec.Stats()
	binary, final := st.Verdict()
	switch {
	case binary && (final || eof):
		tp.t.MarkBinary()
		tp.binary = true
	case final || eof:
		out = tp.t.Trust(out)
	case st.Suspect():
		tp.t.Suspect()
	}
	return out
}

// releaseHeld is the hold timer: it releases what the tidier holds.
func (p *pump) releaseHeld() {
	tp := p.text.tidy
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tp.armed = false
	if tp.closed {
		return
	}
	tp.out = tp.t.Flush(tp.out[:0])
	p.passText(0, tp.out)
}

// closeTidy is closeText with --tidy: the decoder's last text (when the
// reader decoded to EOF: eof), the tidier's, a binary stream's one line,
// then the redactor's held line.
func (p *pump) closeTidy(eof bool) {
	t, tp := p.text, p.text.tidy
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.closed {
		return
	}
	tp.closed = true
	if tp.timer != nil {
		tp.timer.Stop()
	}
	var last []byte
	if eof && !tp.binary {
		last = t.dec.Flush(nil)
	}
	tp.out = p.judge(tp.out[:0], true)
	tp.out = tp.t.Write(tp.out, last)
	tp.out = tp.t.Close(tp.out)
	if tp.binary {
		tp.out = tp.t.CloseBinary(tp.out, p.rawBytes(), tp.head[:tp.nhead])
	}
	p.passText(0, tp.out)
	if t.red != nil {
		p.passRedacted(0, []byte(t.red.Close()))
	}
}

// sinking reports whether the reader may stop decoding: the stream was
// found binary under --tidy, and its text is one line.
func (p *pump) sinking() bool { return p.text != nil && p.text.tidy != nil && p.text.tidy.binary }

// afterSink closes the tidier of a stream whose rest was drained without
// decoding (the capture was spent, or the stream found binary): what it
// holds is released (into a spent capture it counts as released, not
// removed), and a binary stream gets its line. The decoder is not flushed:
// what it holds was continued by bytes it never saw.
func (p *pump) afterSink() {
	if p.text != nil && p.text.tidy != nil {
		p.closeTidy(false)
	}
}

// rawBytes is the raw bytes of the pump's stream counted so far.
func (p *pump) rawBytes() int64 {
	t := p.capture.Totals()
	if p.s == decoder.Stderr {
		return t.StderrBytes
	}
	return t.StdoutBytes
}

// text reports what became of each stream's bytes, for totals. Call it
// once the drain is over.
func (st *streams) text() protocol.StreamText {
	var r [2]struct {
		stats  decoder.Stats
		tidied int64
	}
	for s, p := range st.pumps {
		if p.text == nil {
			r[s].stats = p.capture.Stats(decoder.Stream(s))
			continue
		}
		r[s].stats = p.text.dec.Stats()
		if tp := p.text.tidy; tp != nil {
			tp.mu.Lock()
			r[s].tidied = tp.t.Removed()
			tp.mu.Unlock()
		}
	}
	return protocol.StreamText{
		StdoutLossyBytes: r[0].stats.Lossy, StderrLossyBytes: r[1].stats.Lossy,
		StdoutBinary: r[0].stats.Binary(), StderrBinary: r[1].stats.Binary(),
		StdoutTidiedBytes: r[0].tidied, StderrTidiedBytes: r[1].tidied,
	}
}
