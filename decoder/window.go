package decoder

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shellsup/shellsup/request"
)

// Mode is which part of the output a [Window] keeps when the output is larger than the budget.
type Mode int

const (
	// Head keeps the beginning: what a [Capture] keeps.
	Head Mode = iota
	// Tail keeps the end, after one marker that says how much was left out.
	Tail
	// HeadTail keeps the beginning and the end, with one marker between them.
	HeadTail
)

// ParseMode reads "head", "tail" or "head+tail".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "head":
		return Head, nil
	case "tail":
		return Tail, nil
	case "head+tail":
		return HeadTail, nil
	}
	return Head, fmt.Errorf("capture must be head, tail or head+tail (got %q)", s)
}

func (m Mode) String() string {
	return [...]string{"head", "tail", "head+tail"}[m]
}

// lineSlack is how far a cut moves to fall on a line boundary.
const lineSlack = 256

// GapMarker is the text that stands for the n bytes of text a [Tail] or [HeadTail] window left
// out.
func GapMarker(n int64, budget int) string {
	return "\n... " + strconv.FormatInt(n, 10) + " bytes left out (" + strconv.Itoa(budget) + "-byte capture limit) ...\n"
}

// MinWindowBudget is the smallest budget a Tail or HeadTail window accepts: room for the
// longest gap marker and some text.
func MinWindowBudget(budget int) int { return len(GapMarker(1<<62, budget)) + 64 }

// chunk is text of one stream, in arrival order.
type chunk struct {
	s    Stream
	text string
}

// Window keeps the head and/or the tail of the decoded text of both streams under one budget.
// Text goes in with Add, in arrival order across streams; Result says what was kept. The kept
// text of both streams together, marker included, never exceeds the budget; cuts fall on whole
// code points, and on a line boundary when one is within 256 bytes. Not safe for concurrent use.
type Window struct {
	budget   int
	headRoom int // text bytes the head may still take
	tailRoom int // text bytes the tail keeps
	head     [2]strings.Builder
	headDone bool    // the head is full: everything now goes to the tail
	tail     []chunk // the newest text, at most tailRoom bytes
	tailLen  int
	left     int64  // bytes left out between head and tail
	gapAt    Stream // the stream of the first byte left out
}

// NewWindow returns a Window for mode Tail or HeadTail and budget (a [Capture] keeps the head).
func NewWindow(mode Mode, budget int) (*Window, error) {
	if mode == Head {
		return nil, fmt.Errorf("decoder: a Window keeps tail or head+tail; a Capture keeps the head")
	}
	if budget < MinWindowBudget(budget) || budget > request.MaxBudget {
		return nil, fmt.Errorf("budget must be at least %d and at most %d bytes for capture %s (got %d)", MinWindowBudget(budget), request.MaxBudget, mode, budget)
	}
	room := budget - len(GapMarker(1<<62, budget))
	w := &Window{budget: budget}
	switch mode {
	case Tail:
		w.tailRoom, w.headDone = room, true
	case HeadTail:
		w.headRoom = room / 2
		w.tailRoom = room - w.headRoom
	}
	return w, nil
}

// Add takes the next text of stream s. text must be valid UTF-8 (what a Decoder returns).
func (w *Window) Add(s Stream, text string) {
	if !w.headDone {
		if len(text) <= w.headRoom {
			w.head[s].WriteString(text)
			w.headRoom -= len(text)
			return
		}
		n := cutNear(text, w.headRoom)
		w.head[s].WriteString(text[:n])
		text = text[n:]
		w.headDone = true
	}
	if w.tailRoom == 0 {
		w.leave(s, int64(len(text)))
		return
	}
	w.tail = append(w.tail, chunk{s, text})
	w.tailLen += len(text)
	w.trim()
}

// trim drops the oldest tail text until the tail fits.
func (w *Window) trim() {
	for w.tailLen > w.tailRoom {
		c := &w.tail[0]
		over := w.tailLen - w.tailRoom
		if over >= len(c.text) {
			w.leave(c.s, int64(len(c.text)))
			w.tailLen -= len(c.text)
			w.tail = w.tail[1:]
			continue
		}
		n := cutAfter(c.text, over)
		w.leave(c.s, int64(n))
		c.text = c.text[n:]
		w.tailLen -= n
	}
}

func (w *Window) leave(s Stream, n int64) {
	if n == 0 {
		return
	}
	if w.left == 0 {
		w.gapAt = s
	}
	w.left += n
}

// Kept is what a Window kept.
type Kept struct {
	Stdout, Stderr string
	Truncated      bool  // something was left out; the marker is in the text of that stream
	LeftOut        int64 // text bytes left out
}

// Result returns the kept text of each stream: head, then the gap marker on the stream where
// text was first left out, then tail.
func (w *Window) Result() Kept {
	var out [2]strings.Builder
	for s := range out {
		out[s].WriteString(w.head[s].String())
	}
	if w.left > 0 {
		out[w.gapAt].WriteString(GapMarker(w.left, w.budget))
	}
	for _, c := range w.tail {
		out[c.s].WriteString(c.text)
	}
	return Kept{Stdout: out[Stdout].String(), Stderr: out[Stderr].String(), Truncated: w.left > 0, LeftOut: w.left}
}

// cutNear returns the length of the prefix of text to keep within n bytes: whole code points,
// ending after a newline if one is within lineSlack bytes of the cut.
func cutNear(text string, n int) int {
	for n > 0 && text[n]&0xC0 == 0x80 {
		n--
	}
	if i := strings.LastIndexByte(text[max(0, n-lineSlack):n], '\n'); i >= 0 {
		return max(0, n-lineSlack) + i + 1
	}
	return n
}

// cutAfter returns how many leading bytes of text to drop so that at least n are dropped:
// whole code points, and up to just after a newline if one is within lineSlack bytes.
func cutAfter(text string, n int) int {
	for n < len(text) && text[n]&0xC0 == 0x80 {
		n++
	}
	if i := strings.IndexByte(text[n:min(len(text), n+lineSlack)], '\n'); i >= 0 {
		return n + i + 1
	}
	return n
}
