package decoder

import "strings"

// Reference decodes a whole buffer as UTF-8 with U+FFFD replacement. It is the oracle for the
// fuzz tests, so it shares no code with Decoder: it is a literal transcription of the WHATWG
// Encoding Standard's UTF-8 decoder (https://encoding.spec.whatwg.org/#utf-8-decoder), which builds
// code points one byte at a time, where Decoder copies valid runs and looks bytes up in a table.
func Reference(p []byte) string {
	var out strings.Builder
	var (
		codePoint   rune
		bytesNeeded int
		bytesSeen   int
		lower       byte = 0x80
		upper       byte = 0xBF
	)
	for i := 0; i < len(p); i++ {
		b := p[i]
		if bytesNeeded == 0 {
			switch {
			case b <= 0x7F:
				out.WriteByte(b)
			case 0xC2 <= b && b <= 0xDF:
				bytesNeeded = 1
				codePoint = rune(b & 0x1F)
			case 0xE0 <= b && b <= 0xEF:
				if b == 0xE0 {
					lower = 0xA0
				}
				if b == 0xED {
					upper = 0x9F
				}
				bytesNeeded = 2
				codePoint = rune(b & 0xF)
			case 0xF0 <= b && b <= 0xF4:
				if b == 0xF0 {
					lower = 0x90
				}
				if b == 0xF4 {
					upper = 0x8F
				}
				bytesNeeded = 3
				codePoint = rune(b & 0x7)
			default:
				out.WriteRune('\uFFFD')
			}
			continue
		}
		if b < lower || b > upper {
			codePoint, bytesNeeded, bytesSeen = 0, 0, 0
			lower, upper = 0x80, 0xBF
			i-- // "prepend byte to stream": it is read again as the start of a sequence
			out.WriteRune('\uFFFD')
			continue
		}
		lower, upper = 0x80, 0xBF
		codePoint = codePoint<<6 | rune(b&0x3F)
		bytesSeen++
		if bytesSeen != bytesNeeded {
			continue
		}
		out.WriteRune(codePoint)
		codePoint, bytesNeeded, bytesSeen = 0, 0, 0
	}
	if bytesNeeded != 0 { // end of stream inside a sequence
		out.WriteRune('\uFFFD')
	}
	return out.String()
}
