package protocol

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// An Encoder writes frames to an output stream.
type Encoder struct {
	w    io.Writer
	body bytes.Buffer     // the frame's fields, reused
	buf  bytes.Buffer     // the whole frame, reused
	enc  *msgpack.Encoder // writes body
	head *msgpack.Encoder // writes the "type" entry into buf
}

// NewEncoder returns an encoder that writes to w. Each Encode is one Write
// call on w.
func NewEncoder(w io.Writer) *Encoder {
	e := &Encoder{w: w}
	e.enc = msgpack.NewEncoder(&e.body)
	e.enc.UseCompactInts(true)
	e.head = msgpack.NewEncoder(&e.buf)
	return e
}

// Encode writes f as one frame. A frame over MaxFrameSize is not written and
// gives a *FrameError with kind ErrTooLarge.
func (e *Encoder) Encode(f Frame) error {
	frame, err := e.Marshal(f)
	if err != nil {
		return err
	}
	_, err = e.w.Write(frame)
	return err
}

// Marshal returns the bytes of f as one frame, length prefix included,
// without writing them. The slice is valid until the next call.
func (e *Encoder) Marshal(f Frame) ([]byte, error) {
	e.body.Reset()
	if err := e.enc.Encode(f); err != nil {
		return nil, &FrameError{Op: "encode", Kind: ErrMalformed, Err: fmt.Errorf("encoding %s frame: %w", f.Type(), err)}
	}
	n, fields, err := splitMapHeader(e.body.Bytes())
	if err != nil {
		return nil, &FrameError{Op: "encode", Kind: ErrMalformed, Err: fmt.Errorf("encoding %s frame: %w", f.Type(), err)}
	}
	e.buf.Reset()
	e.buf.Write([]byte{0, 0, 0, 0}) // length, filled in below
	// Writes to a bytes.Buffer cannot fail (they panic on OOM instead).
	_ = e.head.EncodeMapLen(n + 1)
	_ = e.head.EncodeString("type")
	_ = e.head.EncodeString(f.Type())
	e.buf.Write(fields)
	frame := e.buf.Bytes()
	size := len(frame) - 4
	if size > MaxFrameSize {
		return nil, &FrameError{Op: "encode", Kind: ErrTooLarge, Size: size}
	}
	binary.BigEndian.PutUint32(frame, uint32(size))
	return frame, nil
}

// splitMapHeader returns the entry count of the msgpack map in b and the
// bytes after its header.
func splitMapHeader(b []byte) (n int, rest []byte, err error) {
	if len(b) == 0 {
		return 0, nil, fmt.Errorf("empty encoding")
	}
	switch c := b[0]; {
	case msgpcode.IsFixedMap(c):
		return int(c & 0x0f), b[1:], nil
	case c == msgpcode.Map16 && len(b) >= 3:
		return int(binary.BigEndian.Uint16(b[1:])), b[3:], nil
	case c == msgpcode.Map32 && len(b) >= 5:
		return int(binary.BigEndian.Uint32(b[1:])), b[5:], nil
	}
	return 0, nil, fmt.Errorf("frame value is not a map (first byte 0x%02x)", b[0])
}
