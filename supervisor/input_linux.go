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

// inputSink takes the input, eof, signal and resize frames of an
// interactive run (docs/interactive.md). Its methods are called by the
// control channel's reader, one frame at a time: a write that waits for
// the command to read holds the reader, so input is never buffered beyond
// the one frame being written.
type inputSink struct {
	f      *os.File // the terminal's master, or the stdin pipe's write end
	tty    bool
	ttyDev uint64 // the terminal's device number, to know its readers
	pgrp   int    // bash's process group, for signals without a terminal
	// bashGone reports that bash has been reaped: its pid, and so its
	// process group's number, may then be a stranger's. nil: never.
	bashGone func() bool
	wrote    atomic.Int64
	mu       sync.Mutex
	closed   bool // eof on a pipe, or the run's ending
}

// handle applies one interactive frame; other frames are not its own.
func (in *inputSink) handle(f protocol.Frame) {
	switch f := f.(type) {
	case *protocol.Input:
		in.write(f.Data)
	case *protocol.EOF:
		in.eof()
	case *protocol.Signal:
		in.signal(f.Signal)
	case *protocol.Resize:
		in.resize(f.Cols, f.Rows)
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
