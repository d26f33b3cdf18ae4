package shellsup

import "unicode/utf8"

// textDecoder turns the raw bytes of one stream, read in pieces, into
// UTF-8 text by the rule shellsup's capture uses (README, "Output
// capture"): each maximal subpart of an ill-formed sequence becomes one
// U+FFFD, as Python's bytes.decode("utf-8", "replace") does, however the
// bytes were split.
//
// The binding does not import shellsup's decoder package (it is the
// capture's, and a test keeps the binding free of it); this is the same
// rule in a few lines over unicode/utf8, and a test compares the two on
// random input split at random places.
type textDecoder struct {
	pending []byte // the start of a sequence, valid so far: at most 3 bytes
}

const replacementChar = "\uFFFD"

// decode appends the text of p to dst. An incomplete sequence at the end of
// p is held back for the next call (or flush).
func (d *textDecoder) decode(dst, p []byte) []byte {
	if len(d.pending) > 0 {
		p = append(d.pending, p...)
		d.pending = nil
	}
	for len(p) > 0 {
		if n := asciiRun(p); n > 0 {
			dst, p = append(dst, p[:n]...), p[n:]
			continue
		}
		if !utf8.FullRune(p) { // valid so far, cut short by the end of p
			d.pending = append([]byte(nil), p...)
			return dst
		}
		if r, n := utf8.DecodeRune(p); r != utf8.RuneError || n > 1 { // n > 1: a real U+FFFD
			dst, p = append(dst, p[:n]...), p[n:]
			continue
		}
		dst, p = append(dst, replacementChar...), p[maximalSubpart(p):]
	}
	return dst
}

// flush appends one U+FFFD for a sequence held back at the end of the
// stream.
func (d *textDecoder) flush(dst []byte) []byte {
	if len(d.pending) == 0 {
		return dst
	}
	d.pending = nil
	return append(dst, replacementChar...)
}

func asciiRun(p []byte) int {
	n := 0
	for n < len(p) && p[n] < utf8.RuneSelf {
		n++
	}
	return n
}

// maximalSubpart is the length of the longest prefix of p that starts a
// well-formed sequence (Unicode Table 3-7), at least 1: the bytes one
// U+FFFD replaces.
func maximalSubpart(p []byte) int {
	size, lo, hi := leadOf(p[0])
	n := 1
	for n < size && n < len(p) {
		b := p[n]
		if n > 1 {
			lo, hi = 0x80, 0xBF
		}
		if b < lo || b > hi {
			break
		}
		n++
	}
	return n
}

// leadOf returns the sequence length a lead byte starts (1 for a byte that
// starts none) and the range of the second byte.
func leadOf(b byte) (size int, lo, hi byte) {
	switch {
	case b >= 0xC2 && b <= 0xDF:
		return 2, 0x80, 0xBF
	case b == 0xE0:
		return 3, 0xA0, 0xBF
	case b == 0xED:
		return 3, 0x80, 0x9F
	case b >= 0xE1 && b <= 0xEF:
		return 3, 0x80, 0xBF
	case b == 0xF0:
		return 4, 0x90, 0xBF
	case b >= 0xF1 && b <= 0xF3:
		return 4, 0x80, 0xBF
	case b == 0xF4:
		return 4, 0x80, 0x8F
	}
	return 1, 0, 0
}
