package decoder

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func room(mode Mode, budget int) int {
	r := budget - len(GapMarker(1<<62, budget))
	return r
}

// TestWindowBudgetEdges: output of exactly the room is kept whole with no marker; one byte more
// leaves one byte out, with exactly one marker.
func TestWindowBudgetEdges(t *testing.T) {
	const budget = 1000
	for _, mode := range []Mode{Tail, HeadTail} {
		r := room(mode, budget)
		for _, n := range []int{r - 1, r, r + 1} {
			w, err := NewWindow(mode, budget)
			require.NoError(t, err)
			text := strings.Repeat("x", n)
			w.Add(Stdout, text)
			k := w.Result()
			if n <= r {
				assert.Equal(t, Kept{Stdout: text}, k, "%s n=%d", mode, n)
				continue
			}
			assert.True(t, k.Truncated)
			assert.EqualValues(t, 1, k.LeftOut, "%s n=%d", mode, n)
			assert.Equal(t, 1, strings.Count(k.Stdout, "bytes left out"))
			assert.LessOrEqual(t, len(k.Stdout), budget)
		}
	}
}

func TestHeadTailGolden(t *testing.T) {
	w, err := NewWindow(HeadTail, 200)
	require.NoError(t, err)
	r := room(HeadTail, 200) // 200 - marker
	for i := 0; i < 100; i++ {
		w.Add(Stdout, "line\n")
	}
	k := w.Result()
	head, tail, ok := strings.Cut(k.Stdout, GapMarker(k.LeftOut, 200))
	require.True(t, ok, k.Stdout)
	assert.True(t, strings.HasSuffix(head, "\n") && strings.HasPrefix(tail, "line"), "cuts on line boundaries: %q | %q", head, tail)
	assert.Equal(t, int64(500), int64(len(head)+len(tail))+k.LeftOut)
	assert.LessOrEqual(t, len(head)+len(tail), r)
}

func TestTailKeepsTheEndAcrossStreams(t *testing.T) {
	w, err := NewWindow(Tail, 300)
	require.NoError(t, err)
	for i := 0; i < 50; i++ {
		w.Add(Stdout, "out-"+strings.Repeat("o", 20)+"\n")
		w.Add(Stderr, "err-"+strings.Repeat("e", 20)+"\n")
	}
	w.Add(Stderr, "the end\n")
	k := w.Result()
	assert.True(t, strings.HasSuffix(k.Stderr, "the end\n"))
	assert.Equal(t, 1, strings.Count(k.Stdout+k.Stderr, "bytes left out"))
	assert.True(t, strings.HasPrefix(k.Stdout, "\n... "), "the marker opens the stream of the first byte left out: %q", k.Stdout)
	assert.LessOrEqual(t, len(k.Stdout)+len(k.Stderr), 300)
}

// TestWindowCutsOnCodePoints: text with no newlines, of 2-, 3- and 4-byte characters, split at
// every chunk size: the kept text is valid UTF-8, within budget, and head+kept+left adds up.
func TestWindowCutsOnCodePoints(t *testing.T) {
	for _, ch := range []string{"é", "€", "😀"} {
		for _, mode := range []Mode{Tail, HeadTail} {
			for step := 1; step <= 7; step++ {
				w, err := NewWindow(mode, 300)
				require.NoError(t, err)
				text := strings.Repeat(ch, 200)
				for i := 0; i < len(text); {
					j := min(len(text), i+step*len(ch))
					w.Add(Stdout, text[i:j])
					i = j
				}
				k := w.Result()
				require.True(t, utf8.ValidString(k.Stdout))
				require.LessOrEqual(t, len(k.Stdout), 300)
				kept := strings.Replace(k.Stdout, GapMarker(k.LeftOut, 300), "", 1)
				require.Equal(t, int64(len(text)), int64(len(kept))+k.LeftOut)
			}
		}
	}
}

func TestWindowRefusals(t *testing.T) {
	_, err := NewWindow(HeadTail, 60)
	assert.ErrorContains(t, err, "(got 60)")
	_, err = NewWindow(Head, 1000)
	assert.Error(t, err)
	_, err = ParseMode("middle")
	assert.ErrorContains(t, err, `"middle"`)
}
