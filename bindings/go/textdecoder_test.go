package shellsup

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/decoder"
)

// TestTextDecoderMatchesTheCapture: the binding's decoder gives the text
// of shellsup's own decoder (package decoder, the capture's), on random
// bytes rich in ill-formed sequences, split at random places. Test code
// may import decoder; the binding itself does not (TestDoesNotDependOnDecoder).
func TestTextDecoderMatchesTheCapture(t *testing.T) {
	pieces := [][]byte{
		[]byte("a"), []byte("é"), []byte("€"), []byte("😀"), []byte(replacementChar),
		{0x80}, {0xBF}, {0xC0}, {0xC1}, {0xC2}, {0xE0}, {0xE0, 0x80}, {0xE0, 0xA0}, {0xED, 0xA0}, {0xED, 0x9F},
		{0xEF, 0xBF}, {0xF0}, {0xF0, 0x80}, {0xF0, 0x90}, {0xF0, 0x90, 0x80}, {0xF4, 0x90}, {0xF4, 0x8F, 0xBF},
		{0xF5}, {0xFF}, {0xE2, 0x82}, []byte("\n"),
	}
	rng := rand.New(rand.NewPCG(11, 42))
	for round := range 2000 {
		var raw []byte
		for range rng.IntN(40) {
			raw = append(raw, pieces[rng.IntN(len(pieces))]...)
		}
		var want decoder.Decoder
		var mine textDecoder
		var got, exp []byte
		for rest := raw; len(rest) > 0; {
			n := 1 + rng.IntN(len(rest))
			got = mine.decode(got, rest[:n])
			exp = want.Decode(exp, rest[:n])
			rest = rest[n:]
		}
		got, exp = mine.flush(got), want.Flush(exp)
		require.Equal(t, string(exp), string(got), "round %d, bytes %q", round, raw)
	}
}
