package supervisor

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/internal/linux"
	"github.com/shellsup/shellsup/redact"
	"github.com/shellsup/shellsup/spill"
)

// readSize is the read buffer of one pipe. Only what must be seen is read
// into user space (the captured text, and whatever a spill or a terminal
// takes alongside it); the rest is spliced away, so a small buffer costs
// nothing and keeps start-up free of megabyte zeroing.
const readSize = 64 << 10

// abandonWait is how long finish waits, after the drain deadline, for a
// reader stuck writing to a destination that does not take bytes (a
// stopped terminal).
const abandonWait = time.Second

// drain reads both pipes until EOF. Each pipe has a pump: its raw bytes go
// to the stream's spill file and, in human mode, to shellsup's own stdout
// or stderr, unbounded; its text goes to the capture, which hands each
// newly captured text to emit in capture order. Once nothing needs the
// bytes in user space, a pump splices the pipe into its one destination
// (the spill file, or /dev/null) and only counts.
type drain struct {
	files [2]*os.File
	pumps [2]*pump
	wg    sync.WaitGroup
	done  chan struct{}
}

// pump is one stream's path from the pipe to its destinations. Its fields
// are read by one goroutine, the stream's reader.
type pump struct {
	f       *os.File
	s       decoder.Stream
	capture *decoder.Capture
	emit    func(decoder.Stream, string)
	text    *textPath   // nil: the capture decodes itself (head capture, no redaction)
	spill   *spill.File // nil without --spill
	fwd     *forwarder  // human mode: the raw bytes to shellsup's own stream
}

// textPath decodes a stream's bytes itself, so that the text can be
// redacted before the budget sees it, and kept in a Window.
type textPath struct {
	dec     decoder.Decoder
	buf     []byte
	red     *redact.Stream // nil without --redact
	window  *sharedWindow  // nil for a head capture
	fwdText *forwarder     // human mode with --redact: the redacted text, not the raw bytes
}

// sharedWindow is the one Window both readers add to, in arrival order.
type sharedWindow struct {
	mu sync.Mutex
	w  *decoder.Window
}

func (w *sharedWindow) add(s decoder.Stream, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.w.Add(s, text)
}

func (w *sharedWindow) result() decoder.Kept {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Result()
}

// forwarder writes a stream to one of shellsup's own streams (human
// mode). After a failed write (EPIPE: the reader is gone) it drops
// everything and calls onFail once.
type forwarder struct {
	f      *os.File
	failed atomic.Bool
	onFail func()
}

func (w *forwarder) write(p []byte) {
	if len(p) == 0 || w.failed.Load() {
		return
	}
	if _, err := w.f.Write(p); err != nil && !w.failed.Swap(true) {
		w.onFail()
	}
}

func (w *forwarder) live() bool { return w != nil && !w.failed.Load() }

func startDrain(c *child, pumps [2]*pump) *drain {
	d := &drain{files: [2]*os.File{c.stdout, c.stderr}, pumps: pumps, done: make(chan struct{})}
	for s, p := range pumps {
		p.f, p.s = d.files[s], decoder.Stream(s)
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			p.run()
		}()
	}
	go func() { d.wg.Wait(); close(d.done) }()
	return d
}

// finish waits up to grace for both pipes to reach EOF, then abandons them
// (something outside the tree still holds a write end), and reports whether
// it had to.
func (d *drain) finish(grace time.Duration) (timedOut bool) {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-d.done:
	case <-t.C:
		timedOut = true
		for _, f := range d.files {
			// Wakes a blocked read with os.ErrDeadlineExceeded.
			_ = f.SetReadDeadline(time.Now())
		}
		select {
		case <-d.done:
		case <-time.After(abandonWait): // a reader blocked writing to a stopped terminal
			return timedOut
		}
	}
	for _, f := range d.files {
		f.Close() // read ends only: nothing to flush
	}
	return timedOut
}

// run reads the pipe while something needs its bytes in user space, then
// sinks the rest.
func (p *pump) run() {
	buf := make([]byte, readSize)
	for p.reads() {
		n, err := p.f.Read(buf)
		if n > 0 {
			p.take(buf[:n])
		}
		if err != nil {
			p.closeText()
			return
		}
	}
	p.sink()
}

// reads reports whether the text still matters: until the capture is
// spent, or to the end for a window or for redacted text forwarded.
func (p *pump) reads() bool {
	if p.text != nil && (p.text.window != nil || p.text.fwdText != nil) {
		return true
	}
	return !p.capture.Spent()
}

// take passes one read's bytes to every destination.
func (p *pump) take(b []byte) {
	if p.spill != nil {
		p.spill.Write(b)
	}
	if p.fwd != nil {
		p.fwd.write(b)
	}
	t := p.text
	if t == nil {
		p.capture.WriteFunc(p.s, b, p.emit)
		return
	}
	t.buf = t.dec.Decode(t.buf[:0], b)
	p.passText(len(b), t.buf)
}

// closeText flushes the stream's text at EOF.
func (p *pump) closeText() {
	t := p.text
	if t == nil {
		p.capture.CloseFunc(p.s, p.emit)
		return
	}
	t.buf = t.dec.Flush(t.buf[:0])
	p.passText(0, t.buf)
	if t.red != nil {
		p.passText(0, []byte(t.red.Close()))
	}
}

// passText hands decoded text (redacted first, if asked) to the capture,
// the window and a text forwarder.
func (p *pump) passText(raw int, text []byte) {
	t := p.text
	if t.red != nil && len(text) > 0 {
		text = []byte(t.red.Write(string(text)))
	}
	p.capture.WriteTextFunc(p.s, raw, text, p.emit)
	if len(text) == 0 {
		return
	}
	if t.window != nil {
		t.window.add(p.s, string(text))
	}
	if t.fwdText != nil {
		t.fwdText.write(text)
	}
}

// sink moves the rest of the pipe to its destinations without decoding:
// spliced into the spill file while it has room, or into /dev/null, or
// copied when a terminal or second destination takes the bytes too.
func (p *pump) sink() {
	for {
		room := p.spill != nil && p.spill.Room() > 0
		switch {
		case p.fwd.live():
			p.copyRest()
			return
		case room:
			if !p.spliceInto(p.spill.Fd(), p.spill.Room, p.spill.Spliced) {
				return // EOF, the drain deadline, or copied instead
			}
			// The spill is full: the rest goes to /dev/null.
		default:
			p.discard()
			return
		}
	}
}

// moved counts n raw bytes drained past the capture.
func (p *pump) moved(n int64) { p.capture.Discard(p.s, int(n)) }

// spliceInto splices the pipe into out until EOF, the drain deadline or
// room() reaching 0; it reports whether it stopped for room. Where splice
// fails it copies the rest instead.
func (p *pump) spliceInto(out int, room func() int64, spliced func(int64)) (full bool) {
	rc, err := p.f.SyscallConn()
	if err != nil {
		p.copyRest()
		return false
	}
	var spliceErr error
	err = rc.Read(func(fd uintptr) bool {
		for i := 0; ; i++ {
			want := int64(pipeSize)
			if room != nil {
				if want = min(want, room()); want <= 0 {
					full = true
					return true
				}
			}
			n, err := linux.Splice(int(fd), out, int(want), unix.SPLICE_F_NONBLOCK|unix.SPLICE_F_MOVE)
			if n > 0 {
				p.moved(n)
				if spliced != nil {
					spliced(n)
				}
				if i%64 == 63 {
					// Back to the poller now and then, which honours the
					// drain deadline, even when a writer keeps the pipe full.
					return false
				}
				continue
			}
			switch {
			case errors.Is(err, unix.EAGAIN):
				return false // wait until readable
			case err != nil:
				spliceErr = err
			}
			return true // EOF (n == 0) or an error
		}
	})
	if spliceErr != nil && err == nil {
		p.copyRest()
		return false
	}
	return full
}

// discard drains the pipe into /dev/null without copying to user space,
// counting the bytes (and, past a full spill, counting them dropped).
func (p *pump) discard() {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		p.copyRest()
		return
	}
	defer null.Close() // nothing written that could be lost
	var dropped func(int64)
	if p.spill != nil {
		dropped = p.spill.Dropped
	}
	p.spliceInto(int(null.Fd()), nil, dropped)
}

// copyRest reads the rest of the pipe and gives each read to the spill
// and the forwarder: the path where splice cannot serve.
func (p *pump) copyRest() {
	buf := make([]byte, readSize)
	for {
		n, err := p.f.Read(buf)
		if n > 0 {
			p.moved(int64(n))
			if p.spill != nil {
				p.spill.Write(buf[:n])
			}
			if p.fwd != nil {
				p.fwd.write(buf[:n])
			}
		}
		if err != nil {
			return // EOF, or the drain deadline
		}
	}
}
