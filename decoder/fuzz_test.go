package decoder_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/request"
)

// split cuts data into the chunk sizes cuts describes: each byte of cuts, in turn and cycling, is
// a size of 0 to 15 (empty chunks included; after the first pass a 0 counts as 1, so it ends).
func split(data, cuts []byte) [][]byte {
	if len(cuts) == 0 {
		return [][]byte{data}
	}
	var chunks [][]byte
	for k := 0; len(data) > 0; k++ {
		n := int(cuts[k%len(cuts)]) % 16
		if n == 0 && k >= len(cuts) {
			n = 1
		}
		n = min(n, len(data))
		chunks = append(chunks, data[:n])
		data = data[n:]
	}
	return chunks
}

// FuzzDecoder checks that Decoder, however its input is split, gives exactly what Reference gives
// for the whole input, and that valid UTF-8 passes through unchanged.
func FuzzDecoder(f *testing.F) {
	for _, v := range loadVectors(f) {
		f.Add(v.raw, []byte{})
		f.Add(v.raw, []byte{1})
		f.Add(v.raw, []byte{2, 3, 0, 1})
	}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		want := decoder.Reference(data)
		got := decodeChunks(split(data, cuts)...)
		if got != want {
			t.Fatalf("decode(%x) in chunks %x: got %+q, Reference gives %+q", data, cuts, got, want)
		}
		require.True(t, utf8.ValidString(got), "decoded text is not valid UTF-8")
		if utf8.Valid(data) {
			require.Equal(t, string(data), got, "valid UTF-8 must pass through unchanged")
		}
	})
}

// FuzzCapture drives a Capture with a random budget and a random interleaving of the two streams,
// checks the invariants of the README's "Output capture", and compares every emit with an independent model.
//
// script is read one byte per step: bit 0 picks the stream; bits 1-3 equal to 7 close it (EOF is
// final: later steps on a closed stream are skipped); otherwise bits 4-7 (n) write the next n*n
// bytes of data to it. What is left of data after the script goes to the first stream still
// open (or nowhere), and the open streams are closed at the end.
func FuzzCapture(f *testing.F) {
	f.Add(uint32(0), []byte("hello \xE2\x82\xAC world \xFF\xF0\x9F\x98\x80"), []byte{0x30, 0x31, 0x20, 0x0E, 0xF1})
	f.Add(uint32(1), []byte(strings.Repeat("é€😀\xFF", 40)), []byte{0x50, 0x51, 0x70, 0x71, 0x0F})
	f.Add(uint32(2*request.DefaultBudget+1), []byte(strings.Repeat("x", 300)), []byte{0xF0, 0xF1})
	f.Add(uint32(6), []byte("\xE2\x82"), []byte{0x20, 0x0E})
	f.Add(uint32(6), []byte("aaaa\xF0\x9F\x98\x80tx"), []byte{0x30, 0x11}) // room 4 filled, then a held-back prefix
	f.Fuzz(func(t *testing.T, budgetSeed uint32, data, script []byte) {
		budget := request.MinBudget + int(budgetSeed>>1)%(request.MaxBudget-request.MinBudget+1)
		if budgetSeed&1 == 0 { // small budgets, so that short inputs overflow
			budget = request.MinBudget + int(budgetSeed>>1)%200
		}
		c, err := decoder.NewCapture(budget)
		require.NoError(t, err)
		var r recorder
		m := newModel(budget)
		var raw [2][]byte
		var closed [2]bool
		for _, op := range script {
			s := decoder.Stream(op & 1)
			switch {
			case closed[s]:
			case op>>1&7 == 7:
				c.CloseFunc(s, r.emit)
				m.close(s)
				closed[s] = true
			default:
				n := min(int(op>>4)*int(op>>4), len(data))
				raw[s] = append(raw[s], data[:n]...)
				c.WriteFunc(s, data[:n], r.emit)
				m.write(s, data[:n])
				data = data[n:]
			}
		}
		for _, s := range []decoder.Stream{decoder.Stdout, decoder.Stderr} {
			if closed[s] {
				continue
			}
			raw[s] = append(raw[s], data...)
			c.WriteFunc(s, data, r.emit)
			m.write(s, data)
			data = nil
			c.CloseFunc(s, r.emit)
			m.close(s)
		}

		tot := requireConsistent(t, c, budget, &r)
		require.Equal(t, int64(len(raw[0])+len(raw[1])), tot.TotalBytes, "totalBytes counts raw bytes")
		checkPrefixes(t, tot, budget, raw)
		require.Equal(t, m.pieces, r.pieces, "emits differ from the model's")
	})
}

// checkPrefixes checks that each stream's captured text is its whole decoded text when nothing was
// truncated; otherwise a prefix of it, and that the stream that overflowed took as much as fitted.
func checkPrefixes(t *testing.T, tot decoder.Totals, budget int, raw [2][]byte) {
	t.Helper()
	marker := request.Marker(budget)
	texts := [2]string{tot.Stdout, tot.Stderr}
	if !tot.Truncated {
		for s := range texts {
			require.Equal(t, decoder.Reference(raw[s]), texts[s], "%v: untruncated capture is the whole text", decoder.Stream(s))
		}
		return
	}
	captured := int(tot.CapturedBytes) - len(marker) // text bytes, marker excluded
	for s := range texts {
		full := decoder.Reference(raw[s])
		got, overflowed := strings.CutSuffix(texts[s], marker)
		require.True(t, strings.HasPrefix(full, got), "%v: captured %+q is not a prefix of %+q", decoder.Stream(s), got, full)
		if !overflowed {
			continue
		}
		require.Less(t, len(got), len(full), "%v: marker emitted, but the whole text fitted", decoder.Stream(s))
		_, size := utf8.DecodeRuneInString(full[len(got):])
		require.Greater(t, captured+size, budget-len(marker),
			"%v: the next code point (%d bytes) would have fitted", decoder.Stream(s), size)
	}
}

// model is an independent model of Capture, for FuzzCapture: it keeps each stream's raw bytes and
// derives the text from Reference alone, so it shares no decoding or cutting code with Capture.
type model struct {
	room   int       // text bytes that may still be captured
	marker string    // the budget's marker
	spent  bool      // the marker was emitted
	raw    [2][]byte // each stream's bytes so far
	seen   [2]string // each stream's text already offered to the budget
	pieces []piece   // what Capture should have emitted, in order
}

func newModel(budget int) *model {
	m := request.Marker(budget)
	return &model{room: budget - len(m), marker: m}
}

// write offers the text that p settles on stream s.
func (m *model) write(s decoder.Stream, p []byte) {
	m.raw[s] = append(m.raw[s], p...)
	if !m.spent {
		m.offer(s, settled(m.raw[s]))
	}
}

// close offers the rest of stream s's text, its held-back tail included.
func (m *model) close(s decoder.Stream) {
	if !m.spent {
		m.offer(s, decoder.Reference(m.raw[s]))
	}
}

// offer takes the part of text not seen before as far as the budget allows, per the README's "Output capture".
func (m *model) offer(s decoder.Stream, text string) {
	if !strings.HasPrefix(text, m.seen[s]) {
		panic(fmt.Sprintf("model: %v text %+q does not extend %+q", s, text, m.seen[s]))
	}
	delta := text[len(m.seen[s]):]
	m.seen[s] = text
	switch {
	case delta == "":
	case len(delta) <= m.room:
		m.room -= len(delta)
		m.pieces = append(m.pieces, piece{s, delta})
	default:
		n := m.room
		for !utf8.RuneStart(delta[n]) {
			n--
		}
		m.pieces = append(m.pieces, piece{s, delta[:n] + m.marker})
		m.spent = true
	}
}

// settled returns the text an incremental decoder must already have produced from raw before
// EOF: the text on which every continuation of raw agrees. One future, "A", replaces a held-back
// incomplete sequence; one of the others completes it whatever its lead byte.
func settled(raw []byte) string {
	raw = raw[:len(raw):len(raw)] // appends below must copy
	common := decoder.Reference(append(raw, 'A'))
	whole := common
	for _, future := range []string{"\x80\x80\x80", "\x90\x80\x80", "\xA0\x80\x80"} {
		other := decoder.Reference(append(raw, future...))
		n := 0
		for n < len(common) && n < len(other) && common[n] == other[n] {
			n++
		}
		common = common[:n]
	}
	n := len(common)
	for n < len(whole) && n > 0 && !utf8.RuneStart(whole[n]) { // back off a partly shared code point
		n--
	}
	return whole[:n]
}
