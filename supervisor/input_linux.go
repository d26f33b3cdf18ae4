package supervisor

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/protocol"
)

// Bounds of the input waiting for the writer: past maxQueuedBytes (or
// maxQueued frames) the control channel's reader waits too, for a parent
// that sends more than the taken frames allow.
const (
	maxQueuedBytes = 4 << 20
	maxQueued      = 1024
)

// inputSink takes the input, eof, signal and resize frames of an
// interactive run (docs/interactive.md). handle is called by the control
// channel's reader, one frame at a time. Input and eof go, in order, to
// one writer goroutine, which says after each input frame how many bytes
// the command has taken (a taken frame): a parent that keeps what it has
// in flight small (the bindings: 1 MiB) never fills the queue, so a
// cancel, a ports query, a signal or a resize behind input the command
// does not read is still seen at once (a signal may overtake input that
// waits, as Ctrl-C on a terminal discards typed-ahead input). A parent
// that sends more fills the queue, and then the reader waits: memory is
// bounded either way.
type inputSink struct {
	f      *os.File // the terminal's master, or the stdin pipe's write end
	tty    bool
	ttyDev uint64 // the terminal's device number, to know its readers
	pgrp   int    // bash's process group, for signals without a terminal
	// bashGone reports that bash has been reaped: its pid, and so its
	// process group's number, may then be a stranger's. nil: never.
	bashGone func() bool
	wrote    atomic.Int64 // bytes written to the command
	taken64  atomic.Int64 // bytes of input frames done with, written or dropped
	mu       sync.Mutex
	closed   bool // eof on a pipe, or the run's ending

	taken func(total int64) // tells the parent; nil: nobody to tell

	qmu     sync.Mutex
	qcond   *sync.Cond // signalled as queued shrinks, and at stop
	queued  int        // bytes of queued input frames
	stopped bool

	startOnce, stopOnce sync.Once
	queue               chan protocol.Frame // to the writer: Input and EOF
	done                chan struct{}       // closed by stop
}

// handle applies one interactive frame; other frames are not its own.
func (in *inputSink) handle(f protocol.Frame) {
	switch f := f.(type) {
	case *protocol.Input, *protocol.EOF:
		in.startOnce.Do(func() { go in.writer() })
		if !in.reserve(f) {
			return // the ending: input is dropped
		}
		select {
		case in.queue <- f:
		case <-in.done: // the ending: input is dropped
		}
	case *protocol.Signal:
		in.signal(f.Signal)
	case *protocol.Resize:
		in.resize(f.Cols, f.Rows)
	}
}

// writer writes the queued input in order until stop.
func (in *inputSink) writer() {
	for {
		select {
		case f := <-in.queue:
			switch f := f.(type) {
			case *protocol.Input:
				in.write(f.Data)
				in.release(len(f.Data))
				in.took(len(f.Data))
			case *protocol.EOF:
				in.eof()
			}
		case <-in.done:
			return
		}
	}
}

// reserve waits until an input frame fits the queue's byte bound (a frame
// larger than the bound waits for an empty queue), or the ending.
func (in *inputSink) reserve(f protocol.Frame) bool {
	n := 0
	if f, ok := f.(*protocol.Input); ok {
		n = len(f.Data)
	}
	in.qmu.Lock()
	defer in.qmu.Unlock()
	for !in.stopped && in.queued > 0 && in.queued+n > maxQueuedBytes {
		in.qcond.Wait()
	}
	in.queued += n
	return !in.stopped
}

// release gives back an input frame's bytes once it is written.
func (in *inputSink) release(n int) {
	in.qmu.Lock()
	in.queued -= n
	in.qmu.Unlock()
	in.qcond.Broadcast()
}

// took counts an input frame as taken, written or dropped, and tells.
func (in *inputSink) took(n int) {
	total := in.taken64.Add(int64(n))
	if in.taken != nil {
		in.taken(total)
	}
}

// write writes b whole, waiting while the command does not read. Input to
// a command that closed its end is dropped (EPIPE), as it is after eof.
func (in *inputSink) write(b []byte) {
	if in.isClosed() || len(b) == 0 {
		return
	}
	n, _ := in.f.Write(b) // EPIPE, EIO (the terminal hung up) or the ending's deadline: the input is dropped
	in.wrote.Add(int64(n))
}

// eof closes the stdin pipe; on a terminal it writes the EOF character
// (VEOF, normally ^D), which ends the input of a read at a line's start.
func (in *inputSink) eof() {
	if !in.tty {
		in.mu.Lock()
		defer in.mu.Unlock()
		if !in.closed {
			in.closed = true
			in.f.Close() // the write end: a failed close loses nothing written with write(2)
		}
		return
	}
	c := byte(4)
	if t, err := unix.IoctlGetTermios(int(in.f.Fd()), unix.TCGETS); err == nil && t.Cc[unix.VEOF] != 0 {
		c = t.Cc[unix.VEOF]
	}
	in.write([]byte{c})
}

// inputSignals maps the names a signal frame may carry.
var inputSignals = map[string]syscall.Signal{
	"INT": unix.SIGINT, "QUIT": unix.SIGQUIT, "TSTP": unix.SIGTSTP,
	"HUP": unix.SIGHUP, "TERM": unix.SIGTERM, "CONT": unix.SIGCONT,
}

// signal sends sig to the terminal's foreground process group (which the
// kernel keeps inside the terminal's session, bash's), or to bash's
// process group without a terminal, while bash is not reaped (its pid then
// cannot be a stranger's). Other names are ignored.
func (in *inputSink) signal(name string) {
	sig, ok := inputSignals[name]
	if !ok || in.isClosed() {
		return
	}
	pgrp := 0
	if in.tty {
		if fg, err := unix.IoctlGetInt(int(in.f.Fd()), unix.TIOCGPGRP); err == nil && fg > 1 {
			pgrp = fg
		}
	} else if in.bashGone == nil || !in.bashGone() {
		pgrp = in.pgrp
	}
	if pgrp > 1 {
		_ = unix.Kill(-pgrp, sig) // ESRCH: the group is gone
	}
}

// resize sets the terminal's size; the kernel sends SIGWINCH to its
// foreground process group. Sizes outside 1..65535 are ignored.
func (in *inputSink) resize(cols, rows int) {
	if !in.tty || cols < 1 || rows < 1 || cols > 0xffff || rows > 0xffff || in.isClosed() {
		return
	}
	_ = pty.Setsize(in.f, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
}

func (in *inputSink) isClosed() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.closed
}

// stop ends the input at the run's ending: a write waiting for the
// command gives up, and later frames are dropped. A stdin pipe is closed;
// the terminal's master stays open for the drain, which closes it.
func (in *inputSink) stop() {
	in.stopOnce.Do(func() { close(in.done) })
	in.qmu.Lock()
	in.stopped = true
	in.qmu.Unlock()
	in.qcond.Broadcast()
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return
	}
	in.closed = true
	_ = in.f.SetWriteDeadline(time.Now())
	if !in.tty {
		in.f.Close()
	}
}

// interactiveFrame reports whether f is a frame an inputSink takes.
func interactiveFrame(f protocol.Frame) bool {
	switch f.(type) {
	case *protocol.Input, *protocol.EOF, *protocol.Signal, *protocol.Resize:
		return true
	}
	return false
}
