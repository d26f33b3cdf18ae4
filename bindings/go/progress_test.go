package shellsup

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/reaper/reapertest"
)

type call struct{ stream, text string }

func TestProgressInOrder(t *testing.T) {
	req := newRequest(t, `echo a; sleep 0.1; echo b >&2; sleep 0.1; echo c; sleep 0.1; printf 'é€😀\n' >&2`)
	var calls []call
	req.Progress = func(stream, text string) error {
		calls = append(calls, call{stream, text})
		return nil
	}
	res, err := Run(context.Background(), req)
	require.NoError(t, err)

	var all []string
	joined := map[string]string{}
	for _, c := range calls {
		all = append(all, c.stream+":"+c.text)
		joined[c.stream] += c.text
	}
	assert.Equal(t, []string{"stdout:a\n", "stderr:b\n", "stdout:c\n", "stderr:é€😀\n"}, all, "in capture order, across streams")
	assert.Equal(t, res.Stdout, joined[Stdout], "joining a stream's texts gives its captured text")
	assert.Equal(t, res.Stderr, joined[Stderr])
}

func TestProgressManyLines(t *testing.T) {
	req := newRequest(t, `for i in $(seq 1 2000); do echo "line $i"; done`)
	var b strings.Builder
	req.Progress = func(stream, text string) error {
		b.WriteString(text)
		return nil
	}
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, res.Stdout, b.String())
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 2000)
	assert.Equal(t, "line 1", lines[0])
	assert.Equal(t, "line 2000", lines[1999])
}

// An error from the callback cancels the run; Run waits for the cleanup and
// returns the complete Result together with that error.
func TestProgressErrorCancels(t *testing.T) {
	errStop := errors.New("the model has seen enough")
	req := newRequest(t, `echo go; setsid sleep 300 & sleep 300 & sleep 0.2; echo more; wait`)
	req.Grace = new(500 * time.Millisecond)
	calls := 0
	req.Progress = func(stream, text string) error {
		calls++
		return errStop
	}
	begin := time.Now()
	res, err := Run(context.Background(), req)
	require.ErrorIs(t, err, errStop)
	assert.Contains(t, err.Error(), "shellsup: progress callback: the model has seen enough")
	assert.Equal(t, 1, calls, "no call after the callback failed")
	assert.True(t, res.Cancelled)
	assert.Equal(t, "request", res.CancelReason)
	assert.True(t, strings.HasPrefix(res.Stdout, "go\n"))
	assert.True(t, res.Cleanup.Clean(), "stragglers: %v", res.Cleanup.Stragglers)
	assert.Less(t, time.Since(begin), 500*time.Millisecond+bound)
}

// A callback that panics: the panic reaches the caller, and shellsup, its
// control channel closed, still cleans up.
func TestProgressPanicStillCleansUp(t *testing.T) {
	req := newRequest(t, `echo go; setsid sleep 300 & sleep 300`)
	req.Progress = func(stream, text string) error { panic("callback bug") }
	assert.PanicsWithValue(t, "callback bug", func() {
		_, _ = Run(context.Background(), req)
	})
	// request's cleanup fails the test if anything is left once shellsup
	// (reaped by Run's spawning goroutine) is gone; give it its time.
	awaitExit(t, req, 2*time.Second+bound)
}

// awaitExit polls until nothing carries req's token.
func awaitExit(t *testing.T, req Request, within time.Duration) {
	t.Helper()
	for _, kv := range req.Env {
		if tok, ok := strings.CutPrefix(kv, reapertest.TokenVar+"="); ok {
			awaitNoLeak(t, reapertest.Token(tok), within)
		}
	}
}
