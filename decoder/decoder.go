package decoder

import (
	"bytes"
	"encoding/binary"
)

// replacement is U+FFFD REPLACEMENT CHARACTER in UTF-8.
const replacement = "\uFFFD"

// asciiMask has the high bit of each of 8 bytes set; a word ANDed with it is zero only if all
// 8 bytes are ASCII.
const asciiMask = 0x8080808080808080

// Decoder is an incremental UTF-8 decoder for one pipe. Its zero value is ready to use.
//
// Between calls it holds back at most 3 bytes: the start of a sequence that is valid so far but
// not yet complete. Invalid bytes become U+FFFD by the maximal-subpart rule, so the text of all
// Decode calls followed by Flush equals Python's raw.decode("utf-8", "replace") of the bytes,
// however they were split.
type Decoder struct {
	pending [3]byte // an incomplete sequence, valid so far
	n       uint8   // bytes used in pending
	heldAt  int64   // the stream offset of pending[0]
	stats   Stats
}

// seq describes a lead byte: the length of its sequence (0 if it can never start one, 1 for
// ASCII) and the range its second byte must fall in. Later bytes are always 0x80-0xBF.
type seq struct{ size, lo, hi uint8 }

// leads maps every byte to its seq, per Unicode Table 3-7 (well-formed byte sequences).
var leads = buildLeads()

func buildLeads() (t [256]seq) {
	for b := 0x00; b <= 0x7F; b++ {
		t[b] = seq{1, 0, 0}
	}
	for b := 0xC2; b <= 0xDF; b++ {
		t[b] = seq{2, 0x80, 0xBF}
	}
	for b := 0xE0; b <= 0xEF; b++ {
		t[b] = seq{3, 0x80, 0xBF}
	}
	t[0xE0].lo = 0xA0 // below A0 is an overlong encoding
	t[0xED].hi = 0x9F // above 9F is a surrogate
	for b := 0xF0; b <= 0xF4; b++ {
		t[b] = seq{4, 0x80, 0xBF}
	}
	t[0xF0].lo = 0x90 // below 90 is an overlong encoding
	t[0xF4].hi = 0x8F // above 8F is beyond U+10FFFF
	// 0x80-0xC1 and 0xF5-0xFF stay {0, 0, 0}: continuation bytes, overlong leads C0/C1, and
	// leads of code points that do not exist.
	return t
}

// Decode appends to dst the text decoded from p and returns the extended slice. An incomplete
// sequence at the end of p is held back and completed (or replaced) by the next call; call
// [Decoder.Flush] at EOF.
func (d *Decoder) Decode(dst, p []byte) []byte {
	if !d.stats.NUL && bytes.IndexByte(p, 0) >= 0 {
		d.stats.NUL = true
	}
	at := d.stats.Bytes // the stream offset of p[0]
	d.stats.Bytes += int64(len(p))
	if d.n > 0 {
		n := len(p)
		dst, p = d.resume(dst, p)
		if d.n > 0 {
			return dst // p was used up and the sequence is still incomplete
		}
		at += int64(n - len(p))
	}
	return d.decode(dst, p, at)
}

// Flush appends the text for a sequence held back at EOF, one U+FFFD, and resets d.
func (d *Decoder) Flush(dst []byte) []byte {
	if d.n == 0 {
		return dst
	}
	d.stats.lost(d.heldAt, int(d.n))
	d.n = 0
	return append(dst, replacement...)
}

// resume feeds bytes of p to the sequence held back by the previous call until it completes,
// fails, or p runs out. It returns the rest of p; a byte that breaks the sequence is not consumed,
// because it may start the next one.
func (d *Decoder) resume(dst, p []byte) ([]byte, []byte) {
	s := leads[d.pending[0]]
	for len(p) > 0 {
		if !s.accepts(int(d.n), p[0]) {
			d.stats.lost(d.heldAt, int(d.n))
			d.n = 0
			return append(dst, replacement...), p
		}
		if d.n+1 == s.size {
			dst = append(dst, d.pending[:d.n]...)
			d.n = 0
			return append(dst, p[0]), p[1:]
		}
		d.pending[d.n] = p[0]
		d.n++
		p = p[1:]
	}
	return dst, p
}

// decode decodes p, which starts at stream offset at, with nothing held back, appending valid
// runs whole. Valid UTF-8 is its own text, so only replacements and a held-back tail interrupt
// the copy.
func (d *Decoder) decode(dst, p []byte, at int64) []byte {
	start := 0 // first byte of the valid run not yet appended
	i := 0
	for i < len(p) {
		b := p[i]
		if b < 0x80 {
			i++
			for i+8 <= len(p) && binary.LittleEndian.Uint64(p[i:])&asciiMask == 0 {
				i += 8
			}
			continue
		}
		s := leads[b]
		// Fast path: a whole, valid multi-byte sequence.
		switch rest := p[i+1:]; s.size {
		case 2:
			if len(rest) >= 1 && isCont(rest[0]) {
				i += 2
				continue
			}
		case 3:
			if len(rest) >= 2 && s.lo <= rest[0] && rest[0] <= s.hi && isCont(rest[1]) {
				i += 3
				continue
			}
		case 4:
			if len(rest) >= 3 && s.lo <= rest[0] && rest[0] <= s.hi && isCont(rest[1]) && isCont(rest[2]) {
				i += 4
				continue
			}
		}
		dst = append(dst, p[start:i]...)
		n := subpart(s, p[i:])
		if i+n == len(p) && n < int(s.size) { // valid so far, cut short by the end of p
			d.n = uint8(copy(d.pending[:], p[i:]))
			d.heldAt = at + int64(i)
			return dst
		}
		// p[i:i+n] is a maximal subpart: one replacement, then go on at the byte that broke it.
		dst = append(dst, 0xEF, 0xBF, 0xBD) // replacement, as bytes: cheaper than a string append
		d.stats.lost(at+int64(i), n)
		i += n
		start = i
	}
	return append(dst, p[start:]...)
}

// isCont reports whether b is a continuation byte, 0x80-0xBF.
func isCont(b byte) bool { return b&0xC0 == 0x80 }

// subpart returns how many bytes at the start of q, whose first byte has seq s, form the longest
// prefix of a well-formed sequence: at least 1 (an invalid lead byte alone), at most s.size.
func subpart(s seq, q []byte) int {
	n := 1
	for n < int(s.size) && n < len(q) && s.accepts(n, q[n]) {
		n++
	}
	return n
}

// accepts reports whether b may be byte k (1, 2 or 3, counting from 0) of a sequence whose lead
// byte has seq s.
func (s seq) accepts(k int, b byte) bool {
	if k == 1 {
		return s.lo <= b && b <= s.hi
	}
	return isCont(b)
}
