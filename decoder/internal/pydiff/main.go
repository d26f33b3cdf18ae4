package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/shellsup/shellsup/decoder"
)

// The op kinds of a case.
const (
	opWriteStdout = iota
	opWriteStderr
	opCloseStdout
	opCloseStderr
)

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	for {
		n, err := readU32(in)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			fatal(fmt.Errorf("reading a batch header: %w", err))
		}
		replies := make([]reply, n)
		for i := range replies {
			if replies[i], err = runCase(in); err != nil {
				fatal(fmt.Errorf("reading case %d of a batch: %w", i, err))
			}
		}
		for _, r := range replies {
			r.write(out)
		}
		if err := out.Flush(); err != nil {
			fatal(fmt.Errorf("writing replies: %w", err))
		}
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "pydiff:", err)
	os.Exit(2)
}

// reply is what one case captured.
type reply struct {
	stdout, stderr string
	truncated      bool
	total, capt    int64
	problem        string
}

// run is one case in flight: the Capture and the text emitted per stream.
type run struct {
	c       *decoder.Capture
	emitted [2]strings.Builder
}

func (r *run) emit(s decoder.Stream, text string) { r.emitted[s].WriteString(text) }

// runCase reads one case and passes its ops through a fresh Capture.
func runCase(in *bufio.Reader) (reply, error) {
	budget, err := readU32(in)
	if err != nil {
		return reply{}, err
	}
	nops, err := readU32(in)
	if err != nil {
		return reply{}, err
	}
	c, err := decoder.NewCapture(int(budget))
	if err != nil {
		return reply{}, fmt.Errorf("creating the capture: %w", err)
	}
	r := &run{c: c}
	for i := uint32(0); i < nops; i++ {
		if err := r.op(in); err != nil {
			return reply{}, fmt.Errorf("op %d: %w", i, err)
		}
	}
	return r.reply(), nil
}

// op reads one op and applies it.
func (r *run) op(in *bufio.Reader) error {
	kind, err := in.ReadByte()
	if err != nil {
		return err
	}
	switch kind {
	case opWriteStdout, opWriteStderr:
		n, err := readU32(in)
		if err != nil {
			return err
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(in, p); err != nil {
			return err
		}
		r.write(decoder.Stream(kind-opWriteStdout), p)
	case opCloseStdout, opCloseStderr:
		closeStream(r.c, decoder.Stream(kind-opCloseStdout), r.emit)
	default:
		return fmt.Errorf("unknown op kind %d (allowed: 0-3)", kind)
	}
	return nil
}

// write passes p to the Capture as a reader goroutine does: once the Capture is spent, the bytes
// are only counted.
func (r *run) write(s decoder.Stream, p []byte) {
	if r.c.Spent() {
		r.c.Discard(s, len(p))
		return
	}
	r.c.WriteFunc(s, p, r.emit)
}

// reply takes the Totals and checks them against the emitted text.
func (r *run) reply() reply {
	t := r.c.Totals()
	rep := reply{stdout: t.Stdout, stderr: t.Stderr, truncated: t.Truncated, total: t.TotalBytes, capt: t.CapturedBytes}
	if got := r.emitted[decoder.Stdout].String(); got != t.Stdout {
		rep.problem = fmt.Sprintf("emitted stdout %q differs from the totals' %q", got, t.Stdout)
	}
	if got := r.emitted[decoder.Stderr].String(); got != t.Stderr {
		rep.problem += fmt.Sprintf("emitted stderr %q differs from the totals' %q", got, t.Stderr)
	}
	return rep
}

func (r reply) write(w *bufio.Writer) {
	writeStr(w, r.stdout)
	writeStr(w, r.stderr)
	if r.truncated {
		w.WriteByte(1)
	} else {
		w.WriteByte(0)
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(r.total))
	w.Write(b[:])
	binary.LittleEndian.PutUint64(b[:], uint64(r.capt))
	w.Write(b[:])
	writeStr(w, r.problem)
}

func writeStr(w *bufio.Writer, s string) {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(len(s)))
	w.Write(b[:])
	w.WriteString(s)
}

func readU32(in *bufio.Reader) (uint32, error) {
	var b [4]byte
	if _, err := io.ReadFull(in, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}
