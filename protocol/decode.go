package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// A Decoder reads frames from an input stream.
type Decoder struct {
	r    io.Reader
	head [4]byte
	body []byte
}

// NewDecoder returns a decoder that reads from r. It reads exactly the
// bytes of each frame, never ahead, so r can be handed on between frames.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: r}
}

// Decode reads the next frame and stores it in *f: a *Start, *Progress,
// *Timeout, *Cancel, *Totals or *Error, or an *Unknown for a type this
// version does not know. At a clean end of stream between frames it returns
// io.EOF; every malformed frame gives a *FrameError. The size limit is
// checked before the body is read.
func (d *Decoder) Decode(f *Frame) error {
	if _, err := io.ReadFull(d.r, d.head[:]); err != nil {
		if err == io.EOF {
			return io.EOF
		}
		return decodeError(ErrTruncated, 0, fmt.Errorf("reading length: %w", err))
	}
	size := binary.BigEndian.Uint32(d.head[:])
	switch {
	case size == 0:
		return decodeError(ErrEmpty, 0, nil)
	case size > MaxFrameSize:
		return decodeError(ErrTooLarge, int(size), nil)
	}
	if cap(d.body) < int(size) {
		d.body = make([]byte, size)
	}
	body := d.body[:size]
	if _, err := io.ReadFull(d.r, body); err != nil {
		return decodeError(ErrTruncated, int(size), fmt.Errorf("reading body: %w", err))
	}
	frame, err := Unmarshal(body)
	if err != nil {
		return err
	}
	*f = frame
	return nil
}

// Unmarshal decodes one frame body (the bytes after the length prefix).
func Unmarshal(body []byte) (Frame, error) {
	if len(body) == 0 {
		return nil, decodeError(ErrEmpty, 0, nil)
	}
	if len(body) > MaxFrameSize {
		return nil, decodeError(ErrTooLarge, len(body), nil)
	}
	if c := body[0]; !msgpcode.IsFixedMap(c) && c != msgpcode.Map16 && c != msgpcode.Map32 {
		return nil, decodeError(ErrMalformed, len(body), fmt.Errorf("body is not a msgpack map (first byte 0x%02x)", c))
	}
	var head struct {
		Type *string `msgpack:"type"`
	}
	if err := unmarshalWhole(body, &head); err != nil {
		return nil, decodeError(ErrMalformed, len(body), err)
	}
	if head.Type == nil {
		return nil, decodeError(ErrMalformed, len(body), errors.New(`frame has no "type" key`))
	}
	frame := newFrame(*head.Type)
	if frame == nil {
		return &Unknown{FrameType: *head.Type}, nil
	}
	if err := unmarshalWhole(body, frame); err != nil {
		return nil, decodeError(ErrMalformed, len(body), fmt.Errorf("decoding %s frame: %w", *head.Type, err))
	}
	return frame, nil
}

// unmarshalWhole decodes body into v and insists that body holds exactly
// one msgpack value.
func unmarshalWhole(body []byte, v any) error {
	r := bytes.NewReader(body)
	dec := msgpack.NewDecoder(r)
	if err := dec.Decode(v); err != nil {
		return err
	}
	if r.Len() != 0 {
		return fmt.Errorf("%d bytes after the map", r.Len())
	}
	return nil
}

func decodeError(kind error, size int, err error) *FrameError {
	return &FrameError{Op: "decode", Kind: kind, Size: size, Err: err}
}
