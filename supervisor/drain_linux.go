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

// abandonWait is how long finish waits, after the drain deadline and the
// last forwarding, for a reader that is not done.
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
	fwds  []*forwarder // human mode: the pumps' forwarders
	wg    sync.WaitGroup
	done  chan struct{} // the pumps are done and every forwarder settled
	stop  atomic.Bool
}

// pump is one stream's path from the pipe to its destinations. Its fields
// are read by one goroutine, the stream's reader.
type pump struct {
	f       *os.File
	s       decoder.Stream
	capture *decoder.Capture
	emit    func(decoder.Stream, string)
	text    *textPath    // nil: the capture decodes itself (head capture, no redaction)
	spill   *spill.File  // nil without --spill
	fwd     *forwarder   // human mode: the raw bytes to shellsup's own stream
	stop    *atomic.Bool // set when the drain gives up on the pipes
	held    atomic.Bool  // the pipe had no EOF when the drain gave up on it
}

// textPath decodes a stream's bytes itself, so that the text can be
// redacted before the budget sees it, and kept in a Window.
type textPath struct {
	dec     decoder.Decoder
	buf     []byte
	red     *redact.Stream // nil without --redact
	window  *sharedWindow  // nil for a head capture
	fwdText *forwarder     // human mode with --redact: the redacted text, not the raw bytes
	tidy    *tidyPath      // nil without --tidy
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

func startDrain(c *child, pumps [2]*pump) *drain {
	d := &drain{files: [2]*os.File{c.stdout, c.stderr}, pumps: pumps, done: make(chan struct{})}
	for s, p := range pumps {
		p.f, p.s, p.stop = d.files[s], decoder.Stream(s), &d.stop
		w := p.forwarder()
		if w != nil {
			d.fwds = append(d.fwds, w)
		}
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			p.run()
			if w != nil {
				w.close()
			}
		}()
	}
	go func() {
		d.wg.Wait()
		for _, w := range d.fwds {
			select {
			case <-w.flushed:
			case <-w.quit:
			}
		}
		close(d.done)
	}()
	return d
}

// forwarder is the pump's forwarder, of raw bytes or of redacted text;
// nil in frames mode.
func (p *pump) forwarder() *forwarder {
	if p.fwd != nil {
		return p.fwd
	}
	if p.text != nil {
		return p.text.fwdText
	}
	return nil
}

// lost is what the forwarding lost to a destination the drain gave up on.
func (d *drain) lost() lost { return lostOf(d.fwds) }

// finish waits up to grace for both pipes to reach EOF and the forwarders
// to write what they were given, then gives up on the pipes (something
// outside the tree still holds a write end), and reports whether it had
// to. Giving up, each reader still takes what the pipe held at that moment
// (the tree's last output), and nothing written after it. A forwarder to
// a slow pipe or file (human mode) is waited for, as cat would be, until
// hurry closes; one to a terminal that takes nothing for stallWait is given
// up on (see settle). The pipes' verdict is the readers' own: a reader held
// up by a forwarder is not a pipe held open.
func (d *drain) finish(grace time.Duration, hurry <-chan struct{}) (timedOut bool) {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-d.done:
	case <-t.C:
		d.stop.Store(true)
		for _, f := range d.files {
			// Wakes a blocked read with os.ErrDeadlineExceeded.
			_ = f.SetReadDeadline(time.Now())
		}
		if !d.settle(hurry) {
			return true // a reader stuck beyond every bound: its pipe's state is unknown
		}
		timedOut = d.pumps[0].held.Load() || d.pumps[1].held.Load()
	}
	for _, f := range d.files {
		f.Close() // read ends only: nothing to flush
	}
	return timedOut
}

// settle waits for the readers and the forwarders, once the drain's grace
// is over. It gives up on a forwarder to a terminal that has had bytes to
// take and taken none for stallWait, and on every forwarder once hurry
// closes; then the readers, which no longer wait for buffers, take what is
// left in the pipes. It reports false if they are still not done
// abandonWait after the last forwarding (never seen: every wait of theirs
// is bounded), leaving them be.
func (d *drain) settle(hurry <-chan struct{}) bool {
	tick := time.NewTicker(stallTick)
	defer tick.Stop()
	lastBusy := time.Now()
	wait := seamStallWait(stallWait)
	for {
		select {
		case <-d.done:
			return true
		case <-hurry:
			for _, w := range d.fwds {
				w.giveUp()
			}
			hurry = nil
		case now := <-tick.C:
			for _, w := range d.fwds {
				if w.stalled(now, wait) {
					w.giveUp()
				}
				if w.busy(now, abandonWait) {
					lastBusy = now
				}
			}
			if now.Sub(lastBusy) >= abandonWait {
				return false
			}
		}
	}
}

// run reads the pipe while something needs its bytes in user space, then
// sinks the rest.
func (p *pump) run() {
	buf := make([]byte, readSize)
	eio := false
	for p.reads() {
		n, err := p.f.Read(buf)
		if n > 0 {
			p.take(buf[:n])
			eio = false
		}
		if err != nil {
			// A terminal's master reads EIO once the slave is closed, and
			// the tree's last write may still be on its way to the read
			// buffer: the next read flushes it in. EOF is two EIOs in a row.
			if errors.Is(err, unix.EIO) && !eio {
				eio = true
				continue
			}
			p.backlog(err, p.take)
			p.closeText()
			return
		}
	}
	p.sink()
	p.afterSink()
}

// backlog takes, after the drain gave up on the pipes (err is the read
// deadline), exactly the bytes the pipe held then: the tree's last output,
// not what a process outside it writes later. The reads bypass the
// poller, whose deadline has passed. It then records whether the pipe is
// still held open (no EOF): the drain's verdict.
func (p *pump) backlog(err error, take func([]byte)) {
	if !errors.Is(err, os.ErrDeadlineExceeded) || !p.stop.Load() {
		return // EOF: nothing is left
	}
	p.held.Store(true) // unless EOF is seen below
	rc, cerr := p.f.SyscallConn()
	if cerr != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		n, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ)
		if err != nil {
			return
		}
		buf := make([]byte, max(min(n, readSize), 1))
		for n > 0 {
			k, err := linux.Read(int(fd), buf[:min(n, len(buf))])
			if k > 0 {
				take(buf[:k])
				n -= k
			}
			if err != nil || k <= 0 {
				break
			}
		}
		// EOF now means every writer is gone: the pipe was only slow to
		// drain (a slow reader of shellsup's own output), not held.
		k, _ := unix.Read(int(fd), buf[:1])
		if k == 0 {
			p.held.Store(false)
		} else if k > 0 {
			p.moved(int64(k)) // written after the deadline: counted, not kept
		}
	})
}

// reads reports whether the text still matters: until the capture is
// spent, or to the end for a window or for redacted text forwarded; under
// --tidy, not past the verdict that the stream is binary.
func (p *pump) reads() bool {
	if p.sinking() {
		return false
	}
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
	p.passDecoded(len(b), b, t.buf)
}

// closeText flushes the stream's text at EOF.
func (p *pump) closeText() {
	t := p.text
	if t == nil {
		p.capture.CloseFunc(p.s, p.emit)
		return
	}
	if t.tidy != nil {
		p.closeTidy(true)
		return
	}
	t.buf = t.dec.Flush(t.buf[:0])
	p.passText(0, t.buf)
	if t.red != nil {
		p.passRedacted(0, []byte(t.red.Close())) // already redacted: the held line, released
	}
}

// passText hands decoded text (redacted first, if asked) to the capture,
// the window and a text forwarder.
func (p *pump) passText(raw int, text []byte) {
	if t := p.text; t.red != nil && len(text) > 0 {
		text = []byte(t.red.Write(string(text)))
	}
	p.passRedacted(raw, text)
}

// passRedacted hands text that needs no more redaction to the capture, the
// window and a text forwarder.
func (p *pump) passRedacted(raw int, text []byte) {
	t := p.text
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
			if !room && spliceable(p.fwd.f) {
				p.fwd.idle() // what the reader queued goes first
				p.fwd.splicing.Store(true)
				more := p.spliceInto(int(p.fwd.f.Fd()), nil, nil, p.waitWritable)
				p.fwd.splicing.Store(false)
				if more {
					continue // given up on: the rest goes elsewhere
				}
				return
			}
			p.copyRest()
			return
		case room:
			if !p.spliceInto(p.spill.Fd(), p.spill.Room, p.spill.Spliced, nil) {
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

// spliceInto splices the pipe into out until EOF, the drain deadline,
// room() reaching 0 or the forwarding given up on; it reports whether it
// stopped for room or the forwarding. Where splice fails it copies the
// rest instead. For an out that can be full (a pipe), an EAGAIN is the
// full out's when the pipe still holds bytes: waitOut then waits until out
// is writable and reports true, or reports false (given up on). Only an
// empty pipe sends the splice back to the poller, to wait for bytes: the
// poller wakes it only for bytes written later, so a pipe left full, its
// writer blocked on it, would never wake it (what out looks like after the
// EAGAIN says nothing: its reader may have emptied it since).
func (p *pump) spliceInto(out int, room func() int64, spliced func(int64), waitOut func(out int) bool) (full bool) {
	rc, err := p.f.SyscallConn()
	if err != nil {
		p.copyRest()
		return false
	}
	var spliceErr error
	err = rc.Read(func(fd uintptr) bool {
		for {
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
				if p.stop.Load() {
					// Back to the poller, which reports the drain deadline,
					// even when a writer keeps the pipe full.
					return false
				}
				continue
			}
			switch {
			case errors.Is(err, unix.EAGAIN) && waitOut != nil && !pipeEmpty(int(fd)):
				if waitOut(out) {
					continue // out was full and has room now
				}
				full = true // the forwarding was given up on
				return true
			case errors.Is(err, unix.EAGAIN):
				return false // the pipe is empty: wait until readable
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
	p.backlog(err, p.takeRest)
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
	p.spliceInto(int(null.Fd()), nil, dropped, nil)
}

// pipeEmpty reports whether the pipe fd holds no bytes. If it cannot
// tell, it says empty: the splice then waits for the poller, which a
// splice that cannot move bytes cannot make spin, where waiting for out
// could.
func pipeEmpty(fd int) bool {
	n, err := unix.IoctlGetInt(fd, unix.TIOCINQ) // FIONREAD
	return err != nil || n == 0
}

// spliceable reports whether f is a pipe: where splice can write without
// blocking (a terminal cannot be spliced into, and a socket's splice can
// block: they are copied to, by the forwarder). Not a regular file:
// splice(2) into a regular file uses and moves the file
// position without the lock write(2) takes, so with `> log 2>&1` (both
// streams on one open file) the two streams' splices overwrote each other's
// bytes. Copies into a file keep every byte.
func spliceable(f *os.File) bool {
	var st unix.Stat_t
	if err := linux.Fstat(int(f.Fd()), &st); err != nil {
		return false
	}
	return st.Mode&unix.S_IFMT == unix.S_IFIFO
}

// waitWritable is spliceInto's waitOut for forwarding, after a splice
// found out full: it waits (in slices of 100 ms, checking that the
// forwarding is not given up on) until out can take bytes or fails, and
// reports true; given up on, it reports false. Out may have room already:
// its reader took bytes since the splice.
func (p *pump) waitWritable(out int) bool {
	fds := []unix.PollFd{{Fd: int32(out), Events: unix.POLLOUT}}
	for p.fwd.live() {
		n, err := linux.Poll(fds, 100)
		if err != nil || n > 0 {
			return true // writable, or failed: splice says which
		}
	}
	return false
}

// copyRest reads the rest of the pipe and gives each read to the spill
// and the forwarder: the path where splice cannot serve.
func (p *pump) copyRest() {
	buf := make([]byte, readSize)
	for {
		n, err := p.f.Read(buf)
		if n > 0 {
			p.takeRest(buf[:n])
		}
		if err != nil {
			p.backlog(err, p.takeRest) // EOF, or the drain deadline
			return
		}
	}
}

// takeRest passes bytes past the capture to the spill and the forwarder.
func (p *pump) takeRest(b []byte) {
	p.moved(int64(len(b)))
	if p.spill != nil {
		p.spill.Write(b)
	}
	if p.fwd != nil {
		p.fwd.write(b)
	}
}
