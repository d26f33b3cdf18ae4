package supervisor

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/protocol"
)

// output is the one writer of shellsup's stdout and stderr. Producers
// enqueue and never block (the queue is bounded by the capture budget plus
// a handful of frames); one goroutine writes, batching whatever has queued
// up into one write per stream, so captured text waits only for the writes
// before it.
//
// In frames mode everything is a frame on stdout. In human mode the drain
// forwards the command's raw bytes to stdout/stderr itself (see
// drain_linux.go), so no progress is queued, and the notices and the
// summary go to stderr from here.
type output struct {
	frames         bool
	stdout, stderr io.Writer
	onFail         func() // called once when a write fails (EPIPE: parent gone)

	// delivered counts the bytes of progress text written successfully:
	// totals' progressBytes, which falls short of capturedBytes only when
	// a write failed.
	delivered atomic.Int64

	mu     sync.Mutex
	queue  []item
	wake   chan struct{}
	failed atomic.Bool
}

// item is one thing to write: a frame, a progress text, a human line, or a
// barrier that is closed once everything before it is written.
type item struct {
	frame   protocol.Frame
	stream  decoder.Stream
	text    string
	human   string // a line for stderr in human mode
	barrier chan struct{}
}

func newOutput(frames bool, stdout, stderr io.Writer) *output {
	o := &output{frames: frames, stdout: stdout, stderr: stderr, wake: make(chan struct{}, 1),
		onFail: func() {}}
	go o.loop()
	return o
}

func (o *output) push(it item) {
	o.mu.Lock()
	o.queue = append(o.queue, it)
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// progress queues captured text of one stream.
func (o *output) progress(s decoder.Stream, text string) {
	o.push(item{stream: s, text: text})
}

// frame queues a frame (frames mode only; ignored in human mode).
func (o *output) frame(f protocol.Frame) {
	if o.frames {
		o.push(item{frame: f})
	}
}

// line queues a line for stderr (human mode only).
func (o *output) line(s string) {
	if !o.frames {
		o.push(item{human: s + "\n"})
	}
}

// flush returns a channel closed once everything queued so far is written
// (or dropped after a write failure).
func (o *output) flush() <-chan struct{} {
	done := make(chan struct{})
	o.push(item{barrier: done})
	return done
}

func (o *output) loop() {
	b := batcher{o: o, enc: protocol.NewEncoder(nil)}
	for range o.wake {
		o.mu.Lock()
		batch := o.queue
		o.queue = nil
		o.mu.Unlock()
		for _, it := range batch {
			b.add(it)
		}
		b.send()
	}
}

// batcher gathers consecutive bytes bound for the same writer into one
// write, keeping the order of everything queued.
type batcher struct {
	o        *output
	enc      *protocol.Encoder
	buf      bytes.Buffer
	to       io.Writer
	progress int // bytes of progress text in buf
}

func (b *batcher) add(it item) {
	o := b.o
	switch {
	case it.barrier != nil:
		b.send() // write what precedes the barrier before releasing it
		close(it.barrier)
	case o.frames:
		f, n := it.frame, 0
		if f == nil {
			f, n = &protocol.Progress{Stream: it.stream.String(), Text: it.text}, len(it.text)
		}
		frame, err := b.enc.Marshal(f)
		if err != nil {
			// Only an oversized frame fails to encode, and the caps on
			// every frame (the budget, 100 stragglers, protocol.MaxPorts
			// ports) rule that out. Should one slip through it is a bug:
			// dropping it keeps the stream well formed, and stderr says so.
			b.append(o.stderr, []byte(fmt.Sprintf("shellsup: internal error: a %s frame was not sent: %v\n", f.Type(), err)), 0)
			return
		}
		b.append(o.stdout, frame, n)
	case it.human != "":
		b.append(o.stderr, []byte(it.human), 0)
	case it.stream == decoder.Stderr:
		b.append(o.stderr, []byte(it.text), len(it.text))
	default:
		b.append(o.stdout, []byte(it.text), len(it.text))
	}
}

func (b *batcher) append(to io.Writer, p []byte, progress int) {
	if b.to != to {
		b.send()
		b.to = to
	}
	b.buf.Write(p)
	b.progress += progress
}

// send writes the batch and credits its progress bytes on success. After a
// failed write nothing more is written.
func (b *batcher) send() {
	defer func() { b.buf.Reset(); b.progress = 0 }()
	o := b.o
	if b.buf.Len() == 0 || o.failed.Load() {
		return
	}
	if _, err := b.to.Write(b.buf.Bytes()); err != nil {
		if !o.failed.Swap(true) {
			o.onFail()
		}
		return
	}
	o.delivered.Add(int64(b.progress))
}

// progressBytes is the number of progress bytes delivered so far; after a
// flush, every byte queued before it is counted or lost.
func (o *output) progressBytes() int64 { return o.delivered.Load() }
