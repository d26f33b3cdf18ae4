package decoder_test

import (
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/request"
)

// recorder keeps what a Capture emitted, in emit order.
type recorder struct {
	pieces []piece
}

type piece struct {
	s    decoder.Stream
	text string
}

// emit is passed to WriteFunc and CloseFunc; it runs under the Capture's lock.
func (r *recorder) emit(s decoder.Stream, text string) {
	r.pieces = append(r.pieces, piece{s, text})
}

// joined returns everything emitted for s.
func (r *recorder) joined(s decoder.Stream) string {
	var b strings.Builder
	for _, p := range r.pieces {
		if p.s == s {
			b.WriteString(p.text)
		}
	}
	return b.String()
}

// requireConsistent checks the invariants every Capture must keep, whatever was written: the
// budget holds, emitted text is exactly the captured text, text is valid UTF-8, and the marker
// appears once, at the end of one stream, exactly when truncated.
func requireConsistent(t *testing.T, c *decoder.Capture, budget int, r *recorder) decoder.Totals {
	t.Helper()
	tot := c.Totals()
	marker := request.Marker(budget)
	require.LessOrEqual(t, tot.CapturedBytes, int64(budget), "captured more than the budget")
	require.Equal(t, int64(len(tot.Stdout)+len(tot.Stderr)), tot.CapturedBytes)
	require.Equal(t, tot.Stdout, r.joined(decoder.Stdout), "emitted stdout differs from captured")
	require.Equal(t, tot.Stderr, r.joined(decoder.Stderr), "emitted stderr differs from captured")
	require.True(t, utf8.ValidString(tot.Stdout), "stdout is not valid UTF-8")
	require.True(t, utf8.ValidString(tot.Stderr), "stderr is not valid UTF-8")
	for _, p := range r.pieces {
		require.NotEmpty(t, p.text, "emit called with empty text")
	}
	require.Equal(t, tot.Truncated, c.Spent())
	markers := 0 // emits that end with the marker; the marker is always last in its emit
	for _, p := range r.pieces {
		if strings.HasSuffix(p.text, marker) {
			markers++
		}
	}
	if !tot.Truncated {
		require.Zero(t, markers, "marker emitted without truncation")
		return tot
	}
	require.Equal(t, 1, markers, "truncated capture must emit the marker exactly once")
	last := r.pieces[len(r.pieces)-1]
	require.True(t, strings.HasSuffix(last.text, marker), "%v: text emitted after the marker", last.s)
	return tot
}

// step is one call on a Capture: Write of p, or Close when close is set.
type step struct {
	s     decoder.Stream
	p     string
	close bool
}

func write(s decoder.Stream, p string) step { return step{s: s, p: p} }
func closeStream(s decoder.Stream) step     { return step{s: s, close: true} }

// run applies steps to c; bytewise splits every write into one-byte writes.
func run(c *decoder.Capture, r *recorder, steps []step, bytewise bool) {
	for _, st := range steps {
		switch {
		case st.close:
			c.CloseFunc(st.s, r.emit)
		case bytewise:
			for i := range len(st.p) {
				c.WriteFunc(st.s, []byte(st.p[i:i+1]), r.emit)
			}
		default:
			c.WriteFunc(st.s, []byte(st.p), r.emit)
		}
	}
}

func TestCaptureBudgetEdges(t *testing.T) {
	const B = request.DefaultBudget
	m := request.Marker(B)
	room := B - len(m) // 65482
	a := func(n int) string { return strings.Repeat("a", n) }
	b := func(n int) string { return strings.Repeat("b", n) }
	const fffd = "\uFFFD"
	out, errs := decoder.Stdout, decoder.Stderr

	tests := []struct {
		name          string
		budget        int
		steps         []step
		wantOut       string
		wantErr       string
		wantTruncated bool
		wantTotal     int64
	}{
		{name: "exactly B-54 bytes: no marker", steps: []step{write(out, a(room))},
			wantOut: a(room), wantTotal: int64(room)},
		{name: "B-53 bytes: marker, captured is B", steps: []step{write(out, a(room+1))},
			wantOut: a(room) + m, wantTruncated: true, wantTotal: int64(room + 1)},
		{name: "B-54 shared by both streams: no marker",
			steps:   []step{write(out, a(room-10)), write(errs, b(10))},
			wantOut: a(room - 10), wantErr: b(10), wantTotal: int64(room)},
		{name: "one byte over across streams: marker on the stream that overflowed",
			steps:   []step{write(out, a(room-10)), write(errs, b(11))},
			wantOut: a(room - 10), wantErr: b(10) + m, wantTruncated: true, wantTotal: int64(room + 1)},
		{name: "3-byte char straddling the edge is dropped, not split",
			steps:   []step{write(out, a(room-2)+"€zzz")},
			wantOut: a(room-2) + m, wantTruncated: true, wantTotal: int64(room + 4)},
		{name: "3-byte char ending exactly at the edge fits",
			steps:   []step{write(out, a(room-3)+"€")},
			wantOut: a(room-3) + "€", wantTotal: int64(room)},
		{name: "3-byte char at the edge then one byte more",
			steps:   []step{write(out, a(room-3)+"€z")},
			wantOut: a(room-3) + "€" + m, wantTruncated: true, wantTotal: int64(room + 1)},
		{name: "4-byte char straddling the edge by one byte",
			steps:   []step{write(out, a(room-3)+"😀")},
			wantOut: a(room-3) + m, wantTruncated: true, wantTotal: int64(room + 1)},
		{name: "room exactly filled, then a 4-byte char in the same chunk",
			steps:   []step{write(out, a(room)+"😀tail")},
			wantOut: a(room) + m, wantTruncated: true, wantTotal: int64(room + 8)},
		{name: "room exactly filled, then an invalid byte in the same chunk",
			steps:   []step{write(out, a(room)+"\xFF")},
			wantOut: a(room) + m, wantTruncated: true, wantTotal: int64(room + 1)},
		{name: "replacement straddling the edge: lone FF is 3 bytes of text",
			steps:   []step{write(out, a(room-1)+"\xFF")},
			wantOut: a(room-1) + m, wantTruncated: true, wantTotal: int64(room)},
		{name: "incomplete at EOF fits: Close adds one replacement",
			steps:   []step{write(out, a(room-3)+"\xE2\x82"), closeStream(out)},
			wantOut: a(room-3) + fffd, wantTotal: int64(room - 1)},
		{name: "incomplete at EOF does not fit: Close adds the marker",
			steps:   []step{write(out, a(room-2)+"\xE2\x82"), closeStream(out)},
			wantOut: a(room-2) + m, wantTruncated: true, wantTotal: int64(room)},
		{name: "stderr overflows first: marker on stderr",
			steps:   []step{write(errs, b(room+1)), write(out, "late")},
			wantErr: b(room) + m, wantTruncated: true, wantTotal: int64(room + 5)},
		{name: "nothing captured on either stream after the marker",
			steps:   []step{write(out, a(room+1)), write(errs, "x"), write(out, "y"), closeStream(errs)},
			wantOut: a(room) + m, wantTruncated: true, wantTotal: int64(room + 3)},
		{name: "small custom budget: marker shows it", budget: 100,
			steps:   []step{write(out, a(60))},
			wantOut: a(48) + "\n... output truncated at 100-byte capture limit ...\n", wantTruncated: true, wantTotal: 60},
		{name: "min budget: one byte fits", budget: request.MinBudget,
			steps: []step{write(out, "a")}, wantOut: "a", wantTotal: 1},
		{name: "min budget: two bytes overflow", budget: request.MinBudget,
			steps:   []step{write(out, "ab")},
			wantOut: "a" + request.Marker(request.MinBudget), wantTruncated: true, wantTotal: 2},
		{name: "min budget: a 2-byte char never fits", budget: request.MinBudget,
			steps:   []step{write(errs, "é")},
			wantErr: request.Marker(request.MinBudget), wantTruncated: true, wantTotal: 2},
		{name: "lone FF: total 1, captured 3", steps: []step{write(out, "\xFF"), closeStream(out)},
			wantOut: fffd, wantTotal: 1},
		{name: "empty writes and closes capture nothing",
			steps: []step{write(out, ""), closeStream(out), write(errs, ""), closeStream(errs)}},
	}
	for _, tt := range tests {
		budget := tt.budget
		if budget == 0 {
			budget = B
		}
		for _, bytewise := range []bool{false, true} {
			name := tt.name
			if bytewise {
				name += " (byte at a time)"
			}
			t.Run(name, func(t *testing.T) {
				c, err := decoder.NewCapture(budget)
				require.NoError(t, err)
				var r recorder
				run(c, &r, tt.steps, bytewise)
				tot := requireConsistent(t, c, budget, &r)
				assert.Equal(t, tt.wantOut, tot.Stdout, "stdout")
				assert.Equal(t, tt.wantErr, tot.Stderr, "stderr")
				assert.Equal(t, tt.wantTruncated, tot.Truncated, "truncated")
				assert.Equal(t, tt.wantTotal, tot.TotalBytes, "totalBytes")
				assert.Equal(t, int64(len(tt.wantOut)+len(tt.wantErr)), tot.CapturedBytes, "capturedBytes")
			})
		}
	}
}

func TestCaptureLoneFF(t *testing.T) {
	c, err := decoder.NewCapture(request.DefaultBudget)
	require.NoError(t, err)
	assert.Equal(t, "\uFFFD", c.Write(decoder.Stdout, []byte{0xFF}))
	assert.Empty(t, c.Close(decoder.Stdout))
	tot := c.Totals()
	assert.Equal(t, int64(1), tot.TotalBytes)
	assert.Equal(t, int64(3), tot.CapturedBytes)
}

func TestCaptureThreeMiBEachStream(t *testing.T) {
	const MiB = 1 << 20
	c, err := decoder.NewCapture(request.DefaultBudget)
	require.NoError(t, err)
	var r recorder
	chunk := []byte(strings.Repeat("o", 64<<10))
	for range 3 * MiB / len(chunk) {
		c.WriteFunc(decoder.Stdout, chunk, r.emit)
	}
	chunk = []byte(strings.Repeat("e", 64<<10))
	for range 3 * MiB / len(chunk) {
		c.WriteFunc(decoder.Stderr, chunk, r.emit)
	}
	c.CloseFunc(decoder.Stdout, r.emit)
	c.CloseFunc(decoder.Stderr, r.emit)

	tot := requireConsistent(t, c, request.DefaultBudget, &r)
	m := request.Marker(request.DefaultBudget)
	assert.Equal(t, 1, strings.Count(tot.Stdout+tot.Stderr, m), "exactly one marker")
	assert.True(t, strings.HasSuffix(tot.Stdout, m), "marker on stdout, which overflowed")
	assert.Empty(t, tot.Stderr, "nothing captured after the marker")
	assert.True(t, tot.Truncated)
	assert.Equal(t, int64(6*MiB), tot.TotalBytes)
	assert.Equal(t, int64(request.DefaultBudget), tot.CapturedBytes)
	assert.Equal(t, 1, len(r.pieces), "the first 64 KiB chunk overflows: its fitting text and the marker are one emit")
}

func TestCaptureHoldsSplitSequence(t *testing.T) {
	c, err := decoder.NewCapture(request.DefaultBudget)
	require.NoError(t, err)
	assert.Empty(t, c.Write(decoder.Stderr, []byte("\xE2\x82")), "incomplete sequence is not text yet")
	assert.Equal(t, "€", c.Write(decoder.Stderr, []byte("\xAC")))
	assert.Equal(t, int64(3), c.Totals().CapturedBytes)
}

func TestCaptureStreamsDecodeIndependently(t *testing.T) {
	c, err := decoder.NewCapture(request.DefaultBudget)
	require.NoError(t, err)
	assert.Empty(t, c.Write(decoder.Stdout, []byte("\xE2\x82")))
	assert.Equal(t, "\uFFFD", c.Write(decoder.Stderr, []byte("\xAC")), "stderr's byte does not finish stdout's sequence")
	assert.Equal(t, "€", c.Write(decoder.Stdout, []byte("\xAC")))
}

func TestCaptureWriteFuncEmitsTextAndMarkerOnce(t *testing.T) {
	c, err := decoder.NewCapture(100)
	require.NoError(t, err)
	var r recorder
	c.WriteFunc(decoder.Stdout, []byte(strings.Repeat("x", 1000)), r.emit)
	require.Len(t, r.pieces, 1)
	assert.Equal(t, strings.Repeat("x", 48)+request.Marker(100), r.pieces[0].text)
	c.WriteFunc(decoder.Stdout, []byte("more"), r.emit)
	c.CloseFunc(decoder.Stdout, r.emit)
	assert.Len(t, r.pieces, 1, "nothing emitted once spent")
}

func TestCaptureSpentOnlyCounts(t *testing.T) {
	c, err := decoder.NewCapture(request.MinBudget)
	require.NoError(t, err)
	assert.False(t, c.Spent())
	c.Write(decoder.Stdout, []byte("ab"))
	require.True(t, c.Spent())
	before := c.Totals()
	assert.Empty(t, c.Write(decoder.Stderr, []byte("\xFFmore")))
	assert.Empty(t, c.Close(decoder.Stderr))
	c.Discard(decoder.Stdout, 1000)
	after := c.Totals()
	assert.Equal(t, before.TotalBytes+5+1000, after.TotalBytes)
	assert.Equal(t, before.Stdout, after.Stdout)
	assert.Equal(t, before.Stderr, after.Stderr)
	assert.Equal(t, before.CapturedBytes, after.CapturedBytes)
}

// TestCaptureConcurrentReaders drives a Capture from two goroutines, as the supervisor's pipe
// readers do, with chunk sizes that split code points. Run it under -race.
func TestCaptureConcurrentReaders(t *testing.T) {
	input := func(seed uint64, line string) []byte {
		rng := rand.New(rand.NewPCG(seed, seed))
		var b []byte
		for len(b) < 200<<10 {
			b = append(b, line...)
			if rng.IntN(50) == 0 {
				b = append(b, 0xFF) // an invalid byte now and then
			}
		}
		return b
	}
	streams := [2][]byte{
		decoder.Stdout: input(1, "out: héllo wörld €uro 😀\n"),
		decoder.Stderr: input(2, "err: 日本語 ошибка \n"),
	}
	for _, budget := range []int{request.MinBudget, 1000, request.DefaultBudget, request.MaxBudget} {
		t.Run("budget "+request.Marker(budget)[25:31], func(t *testing.T) {
			c, err := decoder.NewCapture(budget)
			require.NoError(t, err)
			var r recorder // appended to under c's lock only
			var wg sync.WaitGroup
			for s, data := range streams {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(s), 7))
					for len(data) > 0 {
						n := min(1+rng.IntN(4096), len(data))
						c.WriteFunc(decoder.Stream(s), data[:n], r.emit)
						data = data[n:]
					}
					c.CloseFunc(decoder.Stream(s), r.emit)
				})
			}
			wg.Wait()
			tot := requireConsistent(t, c, budget, &r)
			assert.Equal(t, int64(len(streams[0])+len(streams[1])), tot.TotalBytes)
			m := request.Marker(budget)
			for s, got := range []string{tot.Stdout, tot.Stderr} {
				want := decoder.Reference(streams[s])
				if tot.Truncated {
					got = strings.TrimSuffix(got, m)
					assert.True(t, strings.HasPrefix(want, got), "%v: captured text is not a prefix of the stream's text", decoder.Stream(s))
				} else {
					assert.Equal(t, want, got, "%v", decoder.Stream(s))
				}
			}
			assert.Equal(t, budget < 400<<10, tot.Truncated)
		})
	}
}

func TestStreamString(t *testing.T) {
	assert.Equal(t, "stdout", decoder.Stdout.String())
	assert.Equal(t, "stderr", decoder.Stderr.String())
	assert.Equal(t, "Stream(7)", decoder.Stream(7).String())
}

// WriteTextFunc takes text the caller decoded (and perhaps rewrote) through the same budget: the
// raw count is the caller's, the text is cut on a code point, the marker comes once.
func TestWriteTextFuncSeam(t *testing.T) {
	c, err := decoder.NewCapture(100)
	require.NoError(t, err)
	var got [2]strings.Builder
	emit := func(s decoder.Stream, text string) { got[s].WriteString(text) }
	c.WriteTextFunc(decoder.Stdout, 10, []byte("[REDACTED:x] "), emit)
	c.WriteTextFunc(decoder.Stderr, 3, []byte("é"), emit)
	c.WriteTextFunc(decoder.Stdout, 40, []byte(strings.Repeat("€", 20)), emit)
	c.WriteTextFunc(decoder.Stdout, 5, []byte("after"), emit)
	tot := c.Totals()
	assert.Equal(t, int64(58), tot.TotalBytes)
	assert.Equal(t, int64(55), tot.StdoutBytes)
	assert.Equal(t, int64(3), tot.StderrBytes)
	assert.True(t, tot.Truncated)
	assert.Equal(t, got[decoder.Stdout].String(), tot.Stdout)
	assert.Equal(t, "é", tot.Stderr)
	assert.Equal(t, 1, strings.Count(tot.Stdout, "output truncated"))
	assert.True(t, utf8.ValidString(tot.Stdout))
	assert.LessOrEqual(t, tot.CapturedBytes, int64(100))
	assert.NotContains(t, tot.Stdout, "after")
}
