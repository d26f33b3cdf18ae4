package shellsup

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/request"
)

// outcome is what the frames of one run said.
type outcome struct {
	start       *protocol.Start  // the first frame, once it arrived
	totals      *protocol.Totals // the last frame of a run that happened
	failure     *protocol.Error  // the only frame of a run that could not happen
	callbackErr error            // the first error the progress callback returned
}

// ended reports whether the frames reached their proper end.
func (o outcome) ended() bool { return o.totals != nil || o.failure != nil }

// frameReader reads shellsup's frames, skipping types this version does
// not know (forward compatibility).
type frameReader struct {
	dec *protocol.Decoder
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{dec: protocol.NewDecoder(r)}
}

// next returns the next known frame. At a clean end of the stream it
// returns io.EOF; a malformed frame gives a *protocol.FrameError.
func (fr *frameReader) next() (protocol.Frame, error) {
	for {
		var f protocol.Frame
		if err := fr.dec.Decode(&f); err != nil {
			return nil, err
		}
		if _, unknown := f.(*protocol.Unknown); !unknown {
			return f, nil
		}
	}
}

// errEndedBeforeStart: the frame stream ended cleanly (no garbage, no
// error frame) before the start frame. A real shellsup ends so only when it
// dies before it has started the command, or right after (a command can
// SIGKILL it that soon).
var errEndedBeforeStart = errors.New("the frame stream ended before the start frame")

// readRun reads the frames of one run in protocol order — start (or a lone
// error), progress, timeout or cancel, progress, totals — and stops after
// the last one, once the stream has ended: a frame after totals is an
// error (see expectEnd). progress, if not nil, gets each progress text until it
// fails; then cancel is called, once. A frame out of order, a malformed
// frame or an early end of the stream is an error; outcome holds what
// arrived before it. watch, if given (a Job's), sees every frame that
// passed the order checks, before readRun acts on it.
func readRun(r io.Reader, progress func(stream, text string) error, cancel func(), watch ...func(protocol.Frame)) (outcome, error) {
	fr := newFrameReader(r)
	var out outcome
	for {
		f, err := fr.next()
		switch {
		case errors.Is(err, io.EOF) && out.start == nil:
			return out, errEndedBeforeStart
		case errors.Is(err, io.EOF):
			return out, errors.New("the frame stream ended before the totals frame")
		case err != nil:
			return out, err
		}
		if err := out.check(f); err != nil {
			return out, err
		}
		for _, w := range watch {
			w(f)
		}
		switch f := f.(type) {
		case *protocol.Start:
			out.start = f
		case *protocol.Error:
			out.failure = f
			return out, nil
		case *protocol.Totals:
			out.totals = f
			return out, fr.expectEnd(r)
		case *protocol.Progress:
			if progress == nil || out.callbackErr != nil {
				continue
			}
			if err := progress(f.Stream, f.Text); err != nil {
				out.callbackErr = err
				cancel()
			}
		}
		// Timeout and cancel notices need no action: totals carries the
		// outcome.
	}
}

// trailWait bounds the wait for the end of the frame stream after totals:
// shellsup exits right after writing it, so the end comes at once unless
// something outside the run holds the write end of the pipe.
const trailWait = exitWait

// expectEnd checks that nothing follows the totals frame. Only shellsup
// writes the frames channel; a frame after totals means someone else could
// write to it too (a command able to open /proc/<shellsup>/fd/1, which
// shellsup forbids unless the command is root), and then no frame of the
// run can be trusted, the totals included. If the stream has not ended
// within trailWait (a stranger holds the pipe and says nothing), the
// totals stand.
func (fr *frameReader) expectEnd(r io.Reader) error {
	if d, ok := r.(interface{ SetReadDeadline(time.Time) error }); ok {
		_ = d.SetReadDeadline(time.Now().Add(trailWait)) // a pipe without deadlines just blocks until EOF
	}
	f, err := fr.next()
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, os.ErrDeadlineExceeded):
		return nil
	case err != nil:
		return fmt.Errorf("after the totals frame: %w", err)
	}
	return fmt.Errorf("a %s frame after the totals frame: something besides shellsup writes to its frame stream, so none of its frames can be trusted", f.Type())
}

// check enforces the order of frames: start or error first, then no
// second start and no error.
func (o outcome) check(f protocol.Frame) error {
	switch f := f.(type) {
	case *protocol.Start:
		if o.start != nil {
			return errors.New("a second start frame")
		}
		if f.Version != protocol.Version {
			return fmt.Errorf("shellsup speaks protocol version %d; this binding speaks version %d", f.Version, protocol.Version)
		}
	case *protocol.Error:
		if o.start != nil {
			return fmt.Errorf("an error frame after the start frame (%s: %s)", f.Category, f.Message)
		}
	default:
		if o.start == nil {
			return fmt.Errorf("a %s frame before the start frame", f.Type())
		}
	}
	return nil
}

// errorOf converts shellsup's error frame.
// A validation failure wraps a *request.ValidationError, as the binding's
// own validation errors do.
func errorOf(f *protocol.Error) *Error {
	if f.Category == CategoryValidation {
		return newError(f.Category, f.Message, &request.ValidationError{Msg: f.Message})
	}
	return newError(f.Category, f.Message, nil)
}
