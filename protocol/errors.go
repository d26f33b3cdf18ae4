package protocol

import (
	"errors"
	"fmt"
)

// Sentinels for the kinds of malformed input, matched with errors.Is on a
// *FrameError.
var (
	// ErrTooLarge: the length prefix is over MaxFrameSize. The body is not
	// read, so the stream cannot be resynchronised.
	ErrTooLarge = errors.New("frame too large")
	// ErrEmpty: the length prefix is 0.
	ErrEmpty = errors.New("empty frame")
	// ErrTruncated: the stream ended inside a frame.
	ErrTruncated = errors.New("truncated frame")
	// ErrMalformed: the body is not one msgpack map with a string "type",
	// or a known key holds a value of the wrong kind.
	ErrMalformed = errors.New("malformed frame")
)

// FrameError describes a frame that could not be encoded or decoded.
type FrameError struct {
	Op   string // "decode" or "encode"
	Kind error  // one of the sentinels above
	Size int    // the frame's length prefix (or encoded size), when known
	Err  error  // the underlying cause, if any
}

func (e *FrameError) Error() string {
	msg := "protocol: " + e.Op + ": " + e.Kind.Error()
	if e.Size > 0 {
		msg += fmt.Sprintf(" (%d bytes", e.Size)
		if errors.Is(e.Kind, ErrTooLarge) {
			msg += fmt.Sprintf(", limit %d", MaxFrameSize)
		}
		msg += ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is makes errors.Is(err, ErrTooLarge) and friends work.
func (e *FrameError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the underlying cause.
func (e *FrameError) Unwrap() error { return e.Err }
