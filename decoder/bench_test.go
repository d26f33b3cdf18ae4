package decoder_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/request"
)

const (
	benchSize  = 64 << 20 // bytes decoded per benchmark iteration
	benchChunk = 64 << 10 // bytes per Decode call, a full Linux pipe
)

// benchInputs returns 64 MiB of each kind of output the decoder meets.
func benchInputs() map[string][]byte {
	fill := func(unit string) []byte {
		b := make([]byte, 0, benchSize+len(unit))
		for len(b) < benchSize {
			b = append(b, unit...)
		}
		return b[:benchSize] // may cut a code point at the very end; Flush handles it
	}
	random := make([]byte, benchSize)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	return map[string][]byte{
		"ascii":  fill("2024-06-01T12:00:00Z INFO compiling package github.com/shellsup/shellsup/decoder\n"),
		"mixed":  fill("build ok ✓ — héllo wörld, привет мир, 日本語のテキスト, emoji 😀🚀\n"),
		"random": random,
	}
}

func BenchmarkDecode(b *testing.B) {
	inputs := benchInputs()
	for _, name := range []string{"ascii", "mixed", "random"} {
		in := inputs[name]
		b.Run(name, func(b *testing.B) {
			dst := make([]byte, 0, 3*benchChunk+3) // worst case: every byte becomes U+FFFD
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				var d decoder.Decoder
				for p := in; len(p) > 0; p = p[min(benchChunk, len(p)):] {
					dst = d.Decode(dst[:0], p[:min(benchChunk, len(p))])
				}
				dst = d.Flush(dst[:0])
			}
		})
	}
}

// BenchmarkCaptureSpent measures Write once the budget is spent, when it must only count bytes.
func BenchmarkCaptureSpent(b *testing.B) {
	c, err := decoder.NewCapture(request.DefaultBudget)
	if err != nil {
		b.Fatal(err)
	}
	chunk := make([]byte, benchChunk)
	for i := range chunk {
		chunk[i] = 'x'
	}
	c.Write(decoder.Stdout, chunk)
	c.Write(decoder.Stdout, chunk)
	if !c.Spent() {
		b.Fatal("capture not spent after two 64 KiB writes")
	}
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		c.Write(decoder.Stderr, chunk)
	}
}

// BenchmarkCaptureWrite measures the capturing path: 4 KiB writes until a default budget is spent.
func BenchmarkCaptureWrite(b *testing.B) {
	chunk := []byte(strings.Repeat("héllo wörld\n", 4<<10/14))
	b.SetBytes(request.DefaultBudget)
	b.ReportAllocs()
	for b.Loop() {
		c, _ := decoder.NewCapture(request.DefaultBudget)
		for !c.Spent() {
			c.WriteFunc(decoder.Stdout, chunk, func(decoder.Stream, string) {})
		}
	}
}
