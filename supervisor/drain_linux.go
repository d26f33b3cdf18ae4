package supervisor

import (
	"errors"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/internal/linux"
)

// readSize is the read buffer of one pipe. Only captured text is read into
// user space (at most the budget, 512 KiB); the rest is spliced away, so a
// small buffer costs nothing and keeps start-up free of megabyte zeroing.
const readSize = 64 << 10

// drain reads both pipes until EOF, feeding the capture, which hands each
// newly captured text to emit in capture order. Once the budget is spent a
// reader stops copying: it splices the pipe into /dev/null and only counts.
type drain struct {
	files [2]*os.File
	wg    sync.WaitGroup
	done  chan struct{}
}

func startDrain(c *child, capture *decoder.Capture, emit func(decoder.Stream, string)) *drain {
	d := &drain{files: [2]*os.File{c.stdout, c.stderr}, done: make(chan struct{})}
	for s, f := range d.files {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			readPipe(f, decoder.Stream(s), capture, emit)
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
		<-d.done
	}
	for _, f := range d.files {
		f.Close() // read ends only: nothing to flush
	}
	return timedOut
}

func readPipe(f *os.File, s decoder.Stream, capture *decoder.Capture, emit func(decoder.Stream, string)) {
	buf := make([]byte, readSize)
	for !capture.Spent() {
		n, err := f.Read(buf)
		if n > 0 {
			capture.WriteFunc(s, buf[:n], emit)
		}
		if err != nil {
			capture.CloseFunc(s, emit)
			return
		}
	}
	discard(f, s, capture)
}

// discard drains f into /dev/null without copying to user space, counting
// the bytes.
func discard(f *os.File, s decoder.Stream, capture *decoder.Capture) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		readAndCount(f, s, capture)
		return
	}
	defer null.Close() // nothing written that could be lost
	rc, err := f.SyscallConn()
	if err != nil {
		readAndCount(f, s, capture)
		return
	}
	var spliceErr error
	nullFd := int(null.Fd())
	err = rc.Read(func(fd uintptr) bool {
		for i := 0; ; i++ {
			n, err := linux.Splice(int(fd), nullFd, pipeSize, unix.SPLICE_F_NONBLOCK|unix.SPLICE_F_MOVE)
			if n > 0 {
				capture.Discard(s, int(n))
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
		readAndCount(f, s, capture)
	}
}

// readAndCount is discard's fallback where splice is unavailable.
func readAndCount(f *os.File, s decoder.Stream, capture *decoder.Capture) {
	buf := make([]byte, readSize)
	for {
		n, err := f.Read(buf)
		capture.Discard(s, n)
		if err != nil {
			return // EOF, or the drain deadline
		}
	}
}
