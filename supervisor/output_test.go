package supervisor

import (
	"bytes"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/protocol"
)

// lockedBuffer is a bytes.Buffer safe to read while the writer runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestOutputFramesInOrder(t *testing.T) {
	var out, errs lockedBuffer
	o := newOutput(true, &out, &errs)
	o.frame(&protocol.Start{Command: "x"})
	for i := 0; i < 100; i++ {
		o.progress(decoder.Stream(i%2), "ab")
	}
	o.line("human only")
	<-o.flush()
	dec := protocol.NewDecoder(bytes.NewReader([]byte(out.String())))
	var types []string
	joined := map[string]string{}
	for {
		var f protocol.Frame
		if dec.Decode(&f) != nil {
			break
		}
		types = append(types, f.Type())
		if p, ok := f.(*protocol.Progress); ok {
			joined[p.Stream] += p.Text
		}
	}
	require.Len(t, types, 101)
	assert.Equal(t, "start", types[0])
	assert.Equal(t, 100, len(joined["stdout"]))
	assert.Equal(t, 100, len(joined["stderr"]))
	assert.EqualValues(t, 200, o.progressBytes())
	assert.Empty(t, errs.String(), "frames mode writes nothing to stderr")
}

func TestOutputHumanKeepsOrderAcrossStreams(t *testing.T) {
	var both lockedBuffer
	o := newOutput(false, &both, &both)
	o.frame(&protocol.Start{}) // ignored in human mode
	o.progress(decoder.Stdout, "1")
	o.progress(decoder.Stderr, "2")
	o.progress(decoder.Stdout, "3")
	o.line("done")
	<-o.flush()
	assert.Equal(t, "123done\n", both.String())
}

type failingWriter struct{ calls int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.calls++
	return 0, errors.New("broken pipe")
}

func TestOutputFailureCancelsOnceAndStops(t *testing.T) {
	w := &failingWriter{}
	o := newOutput(true, w, w)
	fails := 0
	o.onFail = func() { fails++ }
	o.progress(decoder.Stdout, "x")
	<-o.flush()
	o.progress(decoder.Stdout, "y")
	o.frame(&protocol.Totals{})
	<-o.flush()
	assert.Equal(t, 1, fails)
	assert.Equal(t, 1, w.calls, "nothing is written after a failure")
	assert.Zero(t, o.progressBytes(), "undelivered progress is not counted")
}

// TestOutputOversizedFrameIsReported: a frame over protocol.MaxFrameSize
// cannot be sent; it is left out (the stream stays well formed) and stderr
// names it, so it is never lost silently.
func TestOutputOversizedFrameIsReported(t *testing.T) {
	var out, errs lockedBuffer
	o := newOutput(true, &out, &errs)
	big := make([]protocol.Port, 40000)
	for i := range big {
		big[i] = protocol.Port{Proto: "tcp6", Addr: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Port: 65535, Pid: 4194304}
	}
	o.frame(&protocol.Ports{Ports: big})
	o.frame(&protocol.Cancel{Reason: protocol.ReasonRequest})
	<-o.flush()
	assert.Contains(t, errs.String(), "shellsup: internal error: a ports frame was not sent")
	var f protocol.Frame
	require.NoError(t, protocol.NewDecoder(bytes.NewReader([]byte(out.String()))).Decode(&f))
	assert.Equal(t, &protocol.Cancel{Reason: protocol.ReasonRequest}, f, "the frames after it still go out")
}
