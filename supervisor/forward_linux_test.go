//go:build linux

package supervisor

import (
	"bytes"
	"errors"
	"os"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/request"
)

// TestSpliceIntoAPipeItsReaderJustDrained is the rare hang of
// TestHumanModeSlowReader, made deterministic. Human mode splices the
// command's pipe into shellsup's stdout, a pipe to a slow reader. A splice
// returned EAGAIN because stdout was full; before waitWritable looked, the
// reader took bytes, so stdout had room, and waitWritable said "the
// command's pipe was empty": the pump went back to the poller to wait for
// the command's pipe to become readable. That pipe was full and its writer
// blocked on it: no new byte, no wake-up, and the reader waited on an empty
// stdout for ever (the drain deadline never came: the command never
// exited). Here the command's pipe holds bytes and its writer stays open
// writing nothing more (it is blocked, as far as the pump can tell), and the
// reader drains stdout exactly in that window. Every byte must reach the
// reader while the writer is still open; on the old code the read below
// never returns.
func TestSpliceIntoAPipeItsReaderJustDrained(t *testing.T) {
	in, inW := pollablePipe(t)
	outR, outW, fwdFile := rawPipe(t)
	filler := fillPipe(t, outW) // stdout is full: the first splice gets EAGAIN

	payload := bytes.Repeat([]byte("0123456789abcdef"), 2048) // 32 KiB, less than a pipe holds
	consumeWakeup(t, in, func() {
		_, err := inW.Write(payload)
		require.NoError(t, err)
	})

	capture, err := decoder.NewCapture(request.DefaultBudget)
	require.NoError(t, err)
	p := &pump{f: in, s: decoder.Stdout, capture: capture, stop: new(atomic.Bool),
		fwd: newForwarder(fwdFile, func() {})}
	defer p.fwd.close()
	drained := make(chan int, 1) // what the reader took in the window
	waited := false
	waitOut := func(out int) bool { // only the splicing goroutine calls it
		if !waited { // the reader takes what stdout held, in the window
			waited = true
			drained <- drainPipe(outR, filler)
		}
		return p.waitWritable(out)
	}
	done := make(chan bool)
	go func() { done <- p.spliceInto(outW, nil, nil, waitOut) }()

	assert.Equal(t, filler, <-drained, "the reader drained stdout in the window")
	got := make([]byte, 0, len(payload))
	buf := make([]byte, 4096)
	for len(got) < len(payload) {
		n, err := readBlocking(outR, buf)
		require.NoError(t, err)
		got = append(got, buf[:n]...)
	}
	assert.True(t, bytes.Equal(payload, got), "the reader got other bytes than the command wrote")

	require.NoError(t, inW.Close()) // EOF: the splice ends
	assert.False(t, <-done, "EOF, not a given-up forwarding")
	assert.Equal(t, int64(len(payload)), capture.Totals().StdoutBytes)
}

// TestSpliceIntoGoesOnWhileThePipeHoldsBytes: the splice loop used to go
// back to the poller every 64 splices, to notice the drain deadline. The
// poller wakes it only for bytes written later, so when the writer had
// stopped writing without closing the pipe (`seq 1 400000; sleep 30`: bash
// still holds it), the bytes left in the pipe stayed there until the
// writer closed it or the drain gave up. Here each splice may move 256
// bytes, so 32 KiB take 128 splices: all of them must be spliced while the
// writer is open; on the old code the wait below never ends.
func TestSpliceIntoGoesOnWhileThePipeHoldsBytes(t *testing.T) {
	in, inW := pollablePipe(t)
	payload := bytes.Repeat([]byte("0123456789abcdef"), 2048) // 32 KiB
	consumeWakeup(t, in, func() {
		_, err := inW.Write(payload)
		require.NoError(t, err)
	})
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer null.Close()

	capture, err := decoder.NewCapture(request.DefaultBudget)
	require.NoError(t, err)
	p := &pump{f: in, s: decoder.Stdout, capture: capture, stop: new(atomic.Bool)}
	all := make(chan struct{}) // every byte of the payload was spliced
	var total int64
	spliced := func(n int64) { // only the splicing goroutine calls it
		if total += n; total == int64(len(payload)) {
			close(all)
		}
	}
	room := func() int64 { return 256 }
	done := make(chan bool)
	go func() { done <- p.spliceInto(int(null.Fd()), room, spliced, nil) }()

	<-all
	require.NoError(t, inW.Close()) // EOF: the splice ends
	assert.False(t, <-done, "EOF, not a full destination")
	assert.Equal(t, int64(len(payload)), capture.Totals().StdoutBytes)
}

// pollablePipe is a pipe whose read end is non-blocking and in the Go
// poller, as the command's pipes are (outputPipe), and whose write end is
// blocking.
func pollablePipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var p [2]int
	require.NoError(t, unix.Pipe2(p[:], unix.O_CLOEXEC))
	require.NoError(t, unix.SetNonblock(p[0], true))
	r, w = os.NewFile(uintptr(p[0]), "in"), os.NewFile(uintptr(p[1]), "in-w")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// rawPipe is a pipe of two non-blocking descriptors outside the poller;
// the write end is also an *os.File, which owns it (a forwarder's file).
func rawPipe(t *testing.T) (r, w int, wf *os.File) {
	t.Helper()
	var p [2]int
	require.NoError(t, unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK))
	wf = os.NewFile(uintptr(p[1]), "stdout")
	t.Cleanup(func() { unix.Close(p[0]); wf.Close() })
	return p[0], p[1], wf
}

// fillPipe writes to the non-blocking w until the pipe is full, and
// returns how many bytes it holds.
func fillPipe(t *testing.T, w int) int {
	t.Helper()
	chunk := make([]byte, 4096)
	n := 0
	for {
		k, err := unix.Write(w, chunk)
		if errors.Is(err, unix.EAGAIN) {
			return n
		}
		require.NoError(t, err)
		n += k
	}
}

// drainPipe reads n bytes from the non-blocking r, which holds them, and
// returns how many it read.
func drainPipe(r, n int) int {
	buf := make([]byte, 4096)
	got := 0
	for got < n {
		k, err := unix.Read(r, buf[:min(len(buf), n-got)])
		if err != nil || k <= 0 {
			break
		}
		got += k
	}
	return got
}

// readBlocking reads from the non-blocking r, waiting until it has bytes.
func readBlocking(r int, buf []byte) (int, error) {
	fds := []unix.PollFd{{Fd: int32(r), Events: unix.POLLIN}}
	for {
		n, err := unix.Read(r, buf)
		if !errors.Is(err, unix.EAGAIN) {
			return n, err
		}
		if _, err := unix.Poll(fds, -1); err != nil && !errors.Is(err, unix.EINTR) {
			return 0, err
		}
	}
}

// consumeWakeup runs write (which makes f readable) and waits until the Go
// poller has reported f readable, so that wake-up is spent: the poller
// reports f again only for bytes written later.
func consumeWakeup(t *testing.T, f *os.File, write func()) {
	t.Helper()
	rc, err := f.SyscallConn()
	require.NoError(t, err)
	calls := 0
	require.NoError(t, rc.Read(func(uintptr) bool {
		calls++
		if calls == 1 {
			write() // after the poller's reset: its wake-up is the one waited for
			return false
		}
		return true
	}))
}
