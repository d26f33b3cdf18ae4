package tidy

import (
	"bytes"
	"strconv"
	"time"
)

// HoldFor is how long a partial line may wait for its end: the caller calls [Tidier.Flush]
// once [Tidier.Holding] has been true for this long.
const HoldFor = 50 * time.Millisecond

// Line caps: [New] takes a cap between MinLine and MaxLine bytes.
const (
	MinLine = 256
	MaxLine = 1 << 20
)

// FoldAt is the length of the shortest run of identical consecutive lines that is folded.
const FoldAt = 3

// Tidier tidies one stream of decoded text. Its methods must not be called concurrently; the
// zero value is not usable: create one with [New].
type Tidier struct {
	max int // the line cap

	// The escape sequence being parsed.
	st   state
	osc  bool // the control string is an OSC: a newline aborts it
	arg  int  // the CSI's first parameter, -1 when absent
	more bool // past the CSI's first parameter
	priv bool // the CSI has a private marker or an intermediate byte: it is not interpreted

	// The line in progress.
	line    []byte
	cur     int    // the cursor: a byte offset into line, on a code point, at most len(line)
	rel     int    // bytes of the output line released already (by Flush); 0 if none
	relText []byte // those bytes, to compare the line's final state with
	redraw  bool   // a carriage return, backspace or cursor move acted on the line
	erased  bool   // text of the line was overwritten or erased: trailing blanks go

	// The last whole line released, and the copies of it held back since.
	prev            []byte
	prevAt, prevEnd int // prev is dst[prevAt:prevEnd] during a write when prevAt >= 0
	hasPrev         bool
	reps            int

	suspect bool   // released text waits for Flush, Trust or Close
	held    []byte // that text
	binary  bool   // everything is dropped; CloseBinary says what it was

	in, out int64
}

// New returns a Tidier whose lines are cut at maxLine bytes (clamped to [MinLine, MaxLine]): a
// line that grows past the cap is released up to it, ends there, and goes on as a new line.
func New(maxLine int) *Tidier {
	return &Tidier{max: min(max(maxLine, MinLine), MaxLine), arg: -1, prevAt: -1}
}

// Write tidies p, valid UTF-8, and appends the text it releases to dst.
func (t *Tidier) Write(dst, p []byte) []byte {
	t.in += int64(len(p))
	if t.binary {
		return dst
	}
	n0 := len(dst)
	dst = t.scan(dst, p)
	t.keepPrev(dst)
	if t.suspect && len(dst) > n0 {
		t.held = append(t.held, dst[n0:]...)
		dst = dst[:n0]
	}
	t.out += int64(len(dst) - n0)
	return dst
}

// Holding reports whether Flush would release text: a partial line that is not being redrawn,
// or text held while the stream is suspect.
func (t *Tidier) Holding() bool {
	return !t.binary && (len(t.held) > 0 || (!t.redraw && len(t.line) > t.rel))
}

// Flush appends what Holding says is held: the text held while suspect, and the partial line
// unless it is being redrawn. Copies of a repeated line stay held until a different line comes.
func (t *Tidier) Flush(dst []byte) []byte {
	n0 := len(dst)
	dst = append(dst, t.held...)
	t.held = t.held[:0]
	if !t.binary && !t.redraw && len(t.line) > t.rel {
		dst = t.partial(dst)
	}
	t.out += int64(len(dst) - n0)
	return dst
}

// Close ends the stream: an unfinished escape sequence is dropped, and everything held is
// appended to dst, the partial line last (without a newline).
func (t *Tidier) Close(dst []byte) []byte {
	t.st = ground
	if t.binary {
		return dst
	}
	n0 := len(dst)
	dst = append(dst, t.held...)
	t.held, t.suspect = t.held[:0], false
	dst = t.settle(dst)
	if len(t.line) > 0 || t.rel > 0 {
		dst = t.finish(dst, false, true)
	}
	t.out += int64(len(dst) - n0)
	return dst
}

// Suspect makes released text wait until Flush, Trust or Close: the caller does not know yet
// whether the stream is binary.
func (t *Tidier) Suspect() { t.suspect = true }

// Trust ends the suspicion and appends the text held under it.
func (t *Tidier) Trust(dst []byte) []byte {
	t.suspect = false
	n0 := len(dst)
	dst = append(dst, t.held...)
	t.held = t.held[:0]
	t.out += int64(len(dst) - n0)
	return dst
}

// MarkBinary drops everything held and everything written from now on: the stream is binary,
// and [Tidier.CloseBinary] describes it at its end.
func (t *Tidier) MarkBinary() {
	t.binary = true
	t.held, t.line, t.prev = nil, nil, nil
	t.reps, t.rel = 0, 0
}

// Binary reports whether MarkBinary was called.
func (t *Tidier) Binary() bool { return t.binary }

// CloseBinary appends the one line that stands for a binary stream of total raw bytes that
// start with head (its first bytes, at most 8 shown): "[binary output: N bytes; starts 7f 45
// 4c 46 …]".
func (t *Tidier) CloseBinary(dst []byte, total int64, head []byte) []byte {
	n0 := len(dst)
	dst = append(dst, "[binary output: "...)
	dst = strconv.AppendInt(dst, total, 10)
	dst = append(dst, " bytes; starts"...)
	head = head[:min(len(head), 8)]
	for _, b := range head {
		dst = append(dst, ' ', hex[b>>4], hex[b&15])
	}
	if total > int64(len(head)) {
		dst = append(dst, " …"...)
	}
	dst = append(dst, "]\n"...)
	t.out += int64(len(dst) - n0)
	return dst
}

const hex = "0123456789abcdef"

// Removed is the UTF-8 bytes given to Write minus the bytes released: what tidying took out,
// less the fold and binary lines it put in. Exact once the Tidier is closed.
func (t *Tidier) Removed() int64 { return t.in - t.out }

// newline ends the line in progress.
func (t *Tidier) newline(dst []byte) []byte {
	if t.rel > 0 {
		return t.finish(dst, true, true)
	}
	line := t.line
	if t.erased {
		line = trimBlanks(line)
	}
	dst = t.whole(dst, line)
	t.resetLine()
	return dst
}

// whole releases a complete line released in one piece, folding repeats.
func (t *Tidier) whole(dst, line []byte) []byte {
	if t.hasPrev && bytes.Equal(line, t.prevLine(dst)) {
		t.reps++
		return dst
	}
	dst = t.settle(dst)
	t.prevAt = len(dst)
	dst = append(dst, line...)
	t.prevEnd = len(dst)
	dst = append(dst, '\n')
	t.hasPrev = true
	return dst
}

// prevLine is the previous whole line: in dst, where whole put it during this write, or kept.
func (t *Tidier) prevLine(dst []byte) []byte {
	if t.prevAt >= 0 {
		return dst[t.prevAt:t.prevEnd]
	}
	return t.prev
}

// keepPrev copies the previous whole line out of dst, at the end of a write.
func (t *Tidier) keepPrev(dst []byte) {
	if t.prevAt >= 0 {
		t.prev = append(t.prev[:0], dst[t.prevAt:t.prevEnd]...)
		t.prevAt = -1
	}
}

// settle releases the copies of the previous line held back: folded into one line when there
// are at least FoldAt-1 and that line is shorter than they are, else as they were.
func (t *Tidier) settle(dst []byte) []byte {
	if t.reps == 0 {
		return dst
	}
	n := t.reps
	t.reps = 0
	prev := t.prevLine(dst)
	if n >= FoldAt-1 {
		var s [48]byte
		fold := append(append(append(s[:0], "… (same line "...), strconv.Itoa(n)...), " more times)\n"...)
		if len(fold) < n*(len(prev)+1) {
			return append(dst, fold...)
		}
	}
	for range n {
		if t.prevAt >= 0 {
			dst = append(dst, dst[t.prevAt:t.prevEnd]...) // offsets: dst may move as it grows
		} else {
			dst = append(dst, t.prev...)
		}
		dst = append(dst, '\n')
	}
	return dst
}

// partial releases the line in progress so far, without ending it (Flush).
func (t *Tidier) partial(dst []byte) []byte {
	dst = t.settle(dst)
	dst = t.finish(dst, false, false)
	t.hasPrev = false
	return dst
}

// finish releases the part of the line not released yet, ending it with a newline if complete;
// a last state (complete, or at Close) loses the trailing blanks an erase left. When the line no
// longer begins with what was released (it was redrawn), its final state goes on a line of its
// own.
func (t *Tidier) finish(dst []byte, complete, last bool) []byte {
	line := t.line
	if t.erased && last {
		line = trimBlanks(line)
	}
	switch {
	case t.rel == 0:
		dst = append(dst, line...)
	case bytes.HasPrefix(line, t.relText):
		dst = append(dst, line[t.rel:]...)
	case bytes.HasPrefix(t.relText, line) && len(trimBlanks(t.relText[len(line):])) == 0:
		// what is left is what was released, less trailing blanks
	default:
		if len(line) > 0 {
			dst = append(dst, '\n')
			dst = append(dst, line...)
		}
	}
	if complete {
		dst = append(dst, '\n')
		t.resetLine()
		t.hasPrev = false
		return dst
	}
	t.relText = append(t.relText[:0], t.line...)
	t.rel = len(t.relText)
	return dst
}

// resetLine starts an empty line.
func (t *Tidier) resetLine() {
	t.line, t.relText = t.line[:0], t.relText[:0]
	t.cur, t.rel = 0, 0
	t.redraw, t.erased = false, false
}

// long cuts a line that reached the cap: it is released and ended, and what follows starts a
// new line.
func (t *Tidier) long(dst []byte) []byte {
	dst = t.settle(dst)
	return t.finish(dst, true, true)
}

// trimBlanks returns b without trailing spaces and tabs.
func trimBlanks(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}
