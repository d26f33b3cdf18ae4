package supervisor

import (
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Forwarding bounds (human mode). The drain never waits on a terminal: it
// hands each read to a forwarder, which writes it from a goroutine of its
// own. Once the cleanup and the drain grace are over, a forwarder to a
// terminal that has taken nothing for stallWait is given up on, as is every
// forwarder on a hurry (the second Ctrl-C).
const (
	fwdBuffers = 2                // reads queued per stream before the reader waits
	ttyChunk   = 1 << 10          // most bytes per write(2) to a terminal, so its progress shows
	stallWait  = 15 * time.Second // a terminal that took nothing for this long has stopped
	// (not less: the kernel wakes a writer blocked on a pty only once the
	// reader has taken most of its 16 KiB buffer, on a serial line every
	// 4 KiB or so, so a terminal moving at 1–2 KB/s completes no 1 KiB
	// write for several seconds)
	stallTick  = 50 * time.Millisecond  // how often the drain looks
	hurryFlush = 100 * time.Millisecond // the summary's chance after a hurry, when the terminal is stuck
)

// forwarder writes a stream to one of shellsup's own streams (human mode)
// from its own goroutine, so the pipe's reader, and with it the capture,
// the spill and the counts, waits at most for a free buffer, never on a
// write(2): a blocked write cannot be interrupted, and the file
// description is the user's (it is never made non-blocking). After a failed
// write (EPIPE: the reader is gone) it drops everything and calls onFail
// once; once given up on, it drops everything and counts it as not shown.
type forwarder struct {
	f        *os.File
	terminal bool
	onFail   func()
	failed   atomic.Bool

	queue    chan []byte
	free     chan []byte
	flushed  chan struct{} // the writer wrote everything it was given and exited
	quit     chan struct{} // closed by giveUp
	quitOnce sync.Once

	splicing atomic.Bool  // the reader splices into f itself, past the capture
	handed   atomic.Int64 // bytes given to the forwarder (dropped ones too)
	written  atomic.Int64 // bytes write(2) took
	since    atomic.Int64 // unix nanoseconds of the last progress
}

func newForwarder(f *os.File, onFail func()) *forwarder {
	w := &forwarder{f: f, terminal: isTerminal(f), onFail: onFail,
		queue: make(chan []byte, fwdBuffers), free: make(chan []byte, fwdBuffers),
		flushed: make(chan struct{}), quit: make(chan struct{})}
	for range fwdBuffers {
		w.free <- make([]byte, readSize)
	}
	go w.loop()
	return w
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// write queues p, waiting for a free buffer unless the forwarder is given
// up on. Only the stream's reader calls it.
func (w *forwarder) write(p []byte) {
	for len(p) > 0 && !w.failed.Load() {
		var buf []byte
		select {
		case buf = <-w.free:
		case <-w.quit:
			w.handed.Add(int64(len(p))) // not shown
			return
		}
		if w.pending() == 0 {
			w.since.Store(time.Now().UnixNano()) // idle until now: the stall clock starts
		}
		n := copy(buf, p)
		w.handed.Add(int64(n))
		w.queue <- buf[:n] // never blocks: there are as many buffers as slots
		p = p[n:]
	}
}

// idle waits until the writer has written everything queued, or the
// forwarder is given up on: before the reader writes to the same
// destination itself (splicing), so the order holds. Only the stream's
// reader calls it.
func (w *forwarder) idle() {
	var got [][]byte
	defer func() {
		for _, b := range got {
			w.free <- b
		}
	}()
	for len(got) < fwdBuffers {
		select {
		case b := <-w.free:
			got = append(got, b)
		case <-w.quit:
			return
		}
	}
}

// close tells the writer nothing more comes. Only the stream's reader calls
// it, once, when it is done.
func (w *forwarder) close() { close(w.queue) }

func (w *forwarder) loop() {
	defer close(w.flushed)
	for b := range w.queue {
		w.send(b)
		w.free <- b[:cap(b)]
	}
}

// send writes b, to a terminal in pieces of ttyChunk.
func (w *forwarder) send(b []byte) {
	for len(b) > 0 && !w.failed.Load() && !w.gaveUp() {
		k := len(b)
		if w.terminal {
			k = min(k, ttyChunk)
		}
		n, err := w.f.Write(b[:k])
		w.written.Add(int64(n))
		w.since.Store(time.Now().UnixNano())
		if err != nil {
			if !w.failed.Swap(true) {
				w.onFail()
			}
			return
		}
		b = b[n:]
	}
}

// giveUp stops the forwarding: what is queued and whatever comes is
// dropped. A write(2) under way stays blocked (the process's exit ends it).
func (w *forwarder) giveUp() { w.quitOnce.Do(func() { close(w.quit) }) }

func (w *forwarder) gaveUp() bool {
	select {
	case <-w.quit:
		return true
	default:
		return false
	}
}

// settled is closed once the forwarder needs no more waiting for.
func (w *forwarder) settled() bool {
	select {
	case <-w.flushed:
		return true
	case <-w.quit:
		return true
	default:
		return w.failed.Load()
	}
}

// pending is the number of bytes given and not (yet) written.
func (w *forwarder) pending() int64 { return w.handed.Load() - w.written.Load() }

// stalled reports whether the forwarder writes to a terminal that has had
// bytes to take and taken none for d.
func (w *forwarder) stalled(now time.Time, d time.Duration) bool {
	return w.terminal && !w.settled() && w.pending() > 0 && now.Sub(time.Unix(0, w.since.Load())) >= d
}

// busy reports whether the stream is still being forwarded: the forwarder
// has bytes to write or took some within d, or the reader splices into
// the destination (a pipe, waited for as cat would be).
func (w *forwarder) busy(now time.Time, d time.Duration) bool {
	return !w.settled() && (w.pending() > 0 || w.splicing.Load() || now.Sub(time.Unix(0, w.since.Load())) < d)
}

func (w *forwarder) live() bool { return w != nil && !w.failed.Load() && !w.gaveUp() }

// lost is what forwarding lost to a destination that stopped taking
// bytes: the bytes never written, and whether the destination was a
// terminal. Zero unless the drain gave up on a forwarder.
type lost struct {
	gaveUp   bool // on some forwarder
	bytes    int64
	terminal bool
}

// lostOf sums what the given-up forwarders did not write.
func lostOf(fwds []*forwarder) lost {
	var l lost
	for _, w := range fwds {
		if !w.gaveUp() || w.failed.Load() {
			continue
		}
		l.gaveUp = true
		if n := w.pending(); n > 0 {
			l.bytes += n
			l.terminal = l.terminal || w.terminal
		}
	}
	return l
}
