package tidy

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// state is where the byte scan is: in text, or inside an escape sequence.
type state uint8

const (
	ground   state = iota
	escape         // after ESC
	escInter       // after ESC and intermediate bytes: until a final byte (ESC ( B)
	csi            // a control sequence: until its final byte
	str            // a control string (OSC, DCS, SOS, PM, APC): until ST, or BEL
	strEsc         // ESC inside a control string: ST if "\" follows
	strC2          // 0xC2 inside a control string: C1 ST if 0x9C follows
	c2             // 0xC2 at the end of a write: a C1 control or a Latin-1 character
)

// SWAR masks for stops.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// maxArg bounds a CSI parameter (a cursor move pads the line with at most this many spaces).
const maxArg = 4096

// scan is Write's byte scan. It may leave the previous whole line in dst: Write then copies it
// out (keepPrev).
func (t *Tidier) scan(dst, p []byte) []byte {
	c1 := bytes.IndexByte(p, 0xC2) >= 0 // else no word need be looked at for a C1 control
	i := 0
	for i < len(p) {
		if t.st != ground {
			if i = t.skip(p, i); i == len(p) {
				break
			}
			var again bool
			dst, again = t.sequence(dst, p[i])
			if !again {
				i++
			}
			continue
		}
		j := plainEnd(p, i, c1)
		if j < len(p) && p[j] == '\n' && len(t.line) == 0 && t.rel == 0 && !t.erased && j-i <= t.max {
			// The fast path: a whole line, straight from p to dst.
			dst = t.whole(dst, p[i:j])
			t.resetLine()
			i = j + 1
			continue
		}
		if j > i {
			dst = t.text(dst, p[i:j])
			i = j
			continue
		}
		if p[i] == 0xC2 { // not followed by A0-BF: a C1 control, or the write ends here
			if i+1 == len(p) {
				t.st = c2
				return dst
			}
			dst = t.c1(dst, p[i+1])
			i += 2
			continue
		}
		dst = t.control(dst, p[i])
		i++
	}
	return dst
}

// plainEnd returns the end of the run of printable text that starts at p[i]: it stops at a C0
// control, DEL, and (when c1, p holding a 0xC2) a C1 control (C2 80-C2 9F). It looks at sixteen
// bytes at a time, whatever they are.
func plainEnd(p []byte, i int, c1 bool) int {
	for i < len(p) {
		if c1 {
			for i+8 <= len(p) {
				if m := stopBits(binary.LittleEndian.Uint64(p[i:])); m != 0 {
					i += bits.TrailingZeros64(m) >> 3 // the first candidate: bits below it are exact
					break
				}
				i += 8
			}
		} else {
			for i+16 <= len(p) && controlBits(binary.LittleEndian.Uint64(p[i:]))|controlBits(binary.LittleEndian.Uint64(p[i+8:])) == 0 {
				i += 16
			}
			for i+8 <= len(p) {
				if m := controlBits(binary.LittleEndian.Uint64(p[i:])); m != 0 {
					return i + bits.TrailingZeros64(m)>>3 // without a 0xC2 every candidate is a stop
				}
				i += 8
			}
		}
		for end := min(i+8, len(p)); i < end; {
			switch b := p[i]; {
			case b >= 0x20 && b != 0x7F && b != 0xC2:
				i++
			case b == 0xC2 && i+1 < len(p) && p[i+1] >= 0xA0:
				i += 2 // a Latin-1 character, not a C1 control
			default:
				return i
			}
		}
	}
	return i
}

// stopBits has a high bit set at the first byte of x below 0x20, a DEL or a 0xC2, if any. (A
// borrow that could set a false high bit starts at a true one, so the lowest bit set is exact.)
func stopBits(x uint64) uint64 {
	const c2 = 0xC2 * ones
	c := x ^ c2
	return controlBits(x) | (c-ones)&^c&highs
}

// controlBits has a high bit set if x holds a byte below 0x20 or a DEL (0x7F).
func controlBits(x uint64) uint64 {
	const del = 0x7F * ones
	d := x ^ del
	return ((x-0x20*ones)&^x | (d-ones)&^d) & highs
}

// control acts on a C0 control or DEL met in text or inside a sequence.
func (t *Tidier) control(dst []byte, b byte) []byte {
	switch b {
	case '\n':
		return t.newline(dst)
	case '\t':
		return t.text(dst, tab)
	case '\r':
		t.cur, t.redraw = 0, true
	case '\b':
		if t.cur > 0 {
			t.cur = runeStart(t.line, t.cur-1)
		}
		t.redraw = true
	case 0x1B:
		t.st = escape
	}
	return dst // every other control is dropped
}

// c1 acts on the C1 control U+0080+(b-0x80), or drops a lone 0xC2 (invalid input).
func (t *Tidier) c1(dst []byte, b byte) []byte {
	t.st = ground
	switch b {
	case 0x9B:
		t.startCSI()
	case 0x9D:
		t.st, t.osc = str, true
	case 0x90, 0x98, 0x9E, 0x9F:
		t.st, t.osc = str, false
	}
	return dst
}

func (t *Tidier) startCSI() {
	t.st, t.arg, t.more, t.priv = csi, -1, false, false
}

// skip passes over the bytes of a control string's body and of a CSI's parameters, which change
// no state but the CSI's first parameter, and returns the index of the next byte that does.
func (t *Tidier) skip(p []byte, i int) int {
	switch t.st {
	case str:
		for i < len(p) {
			if b := p[i]; b == 0x07 || b == 0x1B || b == 0xC2 || b == '\n' {
				break
			}
			i++
		}
	case csi:
		for ; i < len(p); i++ {
			b := p[i]
			switch {
			case b >= '0' && b <= '9':
				if !t.more {
					t.arg = min(max(t.arg, 0)*10+int(b-'0'), maxArg)
				}
			case b == ';' || b == ':':
				t.more = true
			default:
				return i
			}
		}
	}
	return i
}

// sequence takes one byte of an escape sequence. again says the byte ended the sequence
// without belonging to it, and is to be taken again as text.
func (t *Tidier) sequence(dst []byte, b byte) (_ []byte, again bool) {
	switch t.st {
	case escape, escInter:
		return t.escByte(dst, b)
	case csi:
		return t.csiByte(dst, b)
	case str:
		switch {
		case b == 0x07:
			t.st = ground
		case b == 0x1B:
			t.st = strEsc
		case b == 0xC2:
			t.st = strC2
		case b == '\n' && t.osc:
			t.st = ground // an OSC holds no newline: this one was never ended
			return dst, true
		}
	case strEsc:
		if b == '\\' {
			t.st = ground
			return dst, false
		}
		t.st = escape // ESC ends the string and starts a sequence
		return dst, true
	case strC2:
		if b == 0x9C {
			t.st = ground
			return dst, false
		}
		t.st = str
		return dst, true
	case c2:
		t.st = ground
		if b >= 0x80 && b < 0xA0 {
			return t.c1(dst, b), false
		}
		if b >= 0xA0 && b < 0xC0 {
			return t.text(dst, []byte{0xC2, b}), false
		}
		return dst, true
	}
	return dst, false
}

// escByte takes a byte after ESC (and its intermediates).
func (t *Tidier) escByte(dst []byte, b byte) ([]byte, bool) {
	switch {
	case b >= 0x20 && b <= 0x2F:
		t.st = escInter
	case t.st == escInter && b >= 0x30 && b <= 0x7E:
		t.st = ground
	case b == '[':
		t.startCSI()
	case b == ']':
		t.st, t.osc = str, true
	case b == 'P' || b == 'X' || b == '^' || b == '_':
		t.st, t.osc = str, false
	case b >= 0x30 && b <= 0x7E:
		t.st = ground // a two-character sequence: SS2, SS3, ST, ESC 7, ESC =, ESC M …
	case b == 0x1B, b == 0x7F:
	case b < 0x20:
		return t.control(dst, b), false
	default:
		t.st = ground // not a sequence after all
		return dst, true
	}
	return dst, false
}

// csiByte takes a byte of a control sequence.
func (t *Tidier) csiByte(dst []byte, b byte) ([]byte, bool) {
	switch {
	case b >= '0' && b <= '9':
		if !t.more {
			t.arg = min(max(t.arg, 0)*10+int(b-'0'), maxArg)
		}
	case b == ';' || b == ':':
		t.more = true
	case b >= 0x3C && b <= 0x3F, b >= 0x20 && b <= 0x2F:
		t.priv = true
	case b >= 0x40 && b <= 0x7E:
		t.st = ground
		if !t.priv {
			return t.csiFinal(dst, b), false
		}
	case b == 0x1B:
		t.st = escape
	case b == 0x7F:
	case b < 0x20:
		return t.control(dst, b), false
	default:
		t.st = ground
		return dst, true
	}
	return dst, false
}

// csiFinal acts on the control sequences that change the line: EL (K), CHA (G, `), CUF (C) and
// CUB (D). Every other one is dropped.
func (t *Tidier) csiFinal(dst []byte, final byte) []byte {
	n := t.arg
	switch final {
	case 'K':
		t.eraseLine(max(n, 0))
	case 'G', '`':
		t.moveTo(max(n, 1) - 1)
	case 'C':
		t.moveTo(utf8.RuneCount(t.line[:t.cur]) + max(n, 1))
	case 'D':
		for range max(n, 1) {
			if t.cur == 0 {
				break
			}
			t.cur = runeStart(t.line, t.cur-1)
		}
		t.redraw = true
	}
	return dst
}

// eraseLine is EL: 0 erases from the cursor to the end, 1 from the start to the cursor, 2 all.
func (t *Tidier) eraseLine(n int) {
	switch n {
	case 0:
		if t.cur < len(t.line) {
			t.line = t.line[:t.cur]
			t.erased, t.redraw = true, true
		}
	case 1, 2:
		end := len(t.line)
		if n == 1 && t.cur < end {
			end = t.cur + runeLen(t.line[t.cur])
		}
		col := utf8.RuneCount(t.line[:t.cur])
		blank := utf8.RuneCount(t.line[:end])
		t.splice(0, end, blanks(blank))
		t.cur = col
		t.erased, t.redraw = true, true
	}
}

// moveTo puts the cursor on column col (a code point index), padding the line with spaces.
func (t *Tidier) moveTo(col int) {
	i, c := 0, 0
	for c < col && i < len(t.line) {
		i += runeLen(t.line[i])
		c++
	}
	if c < col {
		t.line = append(t.line, blanks(min(col-c, t.max-len(t.line)))...) // padding stops at the cap
		i = len(t.line)
	}
	if i < t.cur {
		t.redraw = true
	}
	t.cur = i
}

// text puts printable text at the cursor: appended at the end of the line, or over what the
// cursor is on. A line holds at most the cap: when the next code point would make it longer, the
// line is cut there (released and ended) and the code point starts a new one.
func (t *Tidier) text(dst, run []byte) []byte {
	for len(run) > 0 {
		var rest []byte
		if t.cur < len(t.line) {
			rest = t.overwrite(run)
		} else {
			rest = t.appendText(run)
		}
		if len(rest) == len(run) { // not one code point fit
			dst = t.long(dst)
		}
		run = rest
	}
	return dst
}

// appendText appends as much of run as fits under the cap, whole code points, and returns the
// rest.
func (t *Tidier) appendText(run []byte) []byte {
	k := min(len(run), t.max-len(t.line))
	if k < len(run) {
		for k > 0 && run[k]&0xC0 == 0x80 {
			k--
		}
	}
	t.line = append(t.line, run[:k]...)
	t.cur = len(t.line)
	return run[k:]
}

// overwrite writes run over the code points from the cursor on, as far as the line goes and the
// cap allows, and returns what is left of run.
func (t *Tidier) overwrite(run []byte) []byte {
	if t.cur+len(run) <= t.max && runeCount(run) >= runeCount(t.line[t.cur:]) {
		// The common redraw: the new text covers the rest of the line.
		t.line = append(t.line[:t.cur], run...)
		t.cur = len(t.line)
		t.erased = true
		return nil
	}
	i, e := 0, t.cur
	for i < len(run) && e < len(t.line) {
		ri, re := min(runeLen(run[i]), len(run)-i), min(runeLen(t.line[e]), len(t.line)-e)
		if len(t.line)+(i+ri)-(e+re-t.cur) > t.max {
			break // this code point would make the line longer than the cap
		}
		i += ri
		e += re
	}
	if i > 0 {
		t.splice(t.cur, e, run[:i])
		t.cur += i
		t.erased = true
	}
	return run[i:]
}

// splice replaces line[from:to] with b.
func (t *Tidier) splice(from, to int, b []byte) {
	d := len(b) - (to - from)
	if d > 0 {
		t.line = slices.Grow(t.line, d)[:len(t.line)+d]
		copy(t.line[to+d:], t.line[to:len(t.line)-d])
	} else if d < 0 {
		copy(t.line[to+d:], t.line[to:])
		t.line = t.line[:len(t.line)+d]
	}
	copy(t.line[from:], b)
}

var tab = []byte{'\t'}

var spaces = []byte("                                                                ")

// blanks returns n spaces (a fresh slice when n is large).
func blanks(n int) []byte {
	if n <= len(spaces) {
		return spaces[:n]
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = ' '
	}
	return b
}

// runeCount counts the code points of valid UTF-8 b: its bytes that are not continuation
// bytes, eight at a time.
func runeCount(b []byte) int {
	cont := 0
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		cont += bits.OnesCount64(x &^ (x << 1) & highs) // bit 7 set, bit 6 clear: 10xxxxxx
	}
	for ; i < len(b); i++ {
		if b[i]&0xC0 == 0x80 {
			cont++
		}
	}
	return len(b) - cont
}

// runeLen is the length of the code point whose first byte is b (1 for a stray byte).
func runeLen(b byte) int {
	switch {
	case b < 0xC0:
		return 1
	case b < 0xE0:
		return 2
	case b < 0xF0:
		return 3
	}
	return 4
}

// runeStart returns the start of the code point that byte i of b belongs to.
func runeStart(b []byte, i int) int {
	for i > 0 && b[i]&0xC0 == 0x80 {
		i--
	}
	return i
}
