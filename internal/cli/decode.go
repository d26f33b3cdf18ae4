package cli

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/shellsup/shellsup/protocol"
)

const decodeUsage = `usage: shellsup decode < FRAMES

Reads a shellsup frames stream on stdin and prints each frame as one JSON
object per line, keys in the order they were sent, e.g.

  shellsup --frames -- 'echo hi' </dev/null | shellsup decode

Text is valid UTF-8 on the wire, so the JSON shows it exactly. Exit status:
0 at a clean end of stream, 1 at a malformed frame (reported on stderr after
the frames before it), 2 for a bad command line.
`

// decodeMain is the decode subcommand.
func decodeMain(args []string) int {
	if len(args) == 1 && (args[0] == "--help" || args[0] == "-h" || args[0] == "-help") {
		fmt.Print(decodeUsage)
		return 0
	}
	if len(args) > 0 {
		fmt.Fprintf(os.Stderr, "shellsup decode: unexpected argument %q: it reads frames from stdin and takes no arguments; see shellsup decode --help\n", args[0])
		return 2
	}
	if err := decodeStream(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "shellsup decode: %v\n", err)
		return 1
	}
	return 0
}

// decodeStream copies every frame of in to out as a JSON line, flushing
// after each so that a live run shows up as it happens.
func decodeStream(in io.Reader, out io.Writer) error {
	r := bufio.NewReader(in)
	w := bufio.NewWriter(out)
	for n := 1; ; n++ {
		body, err := readFrame(r)
		if errors.Is(err, io.EOF) {
			return w.Flush()
		}
		if err == nil {
			err = frameJSON(w, body)
		}
		if err != nil {
			w.Flush()
			return fmt.Errorf("frame %d: %w", n, err)
		}
		if err := w.WriteByte('\n'); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("writing frame %d: %w", n, err)
		}
	}
}

// readFrame reads one length-prefixed frame body and checks it is a frame
// (a msgpack map with a string "type"); io.EOF at a clean end of stream.
func readFrame(r io.Reader) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("stream ends inside a length prefix")
		}
		return nil, err
	}
	size := binary.BigEndian.Uint32(head[:])
	if size == 0 || size > protocol.MaxFrameSize {
		return nil, fmt.Errorf("length %d is outside 1 … %d", size, protocol.MaxFrameSize)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("stream ends inside a %d-byte frame: %w", size, err)
	}
	if _, err := protocol.Unmarshal(body); err != nil {
		return nil, err
	}
	return body, nil
}

// frameJSON writes one frame body as a JSON object, keys in wire order.
func frameJSON(w *bufio.Writer, body []byte) error {
	dec := msgpack.NewDecoder(bytes.NewReader(body))
	return valueJSON(w, dec)
}

// valueJSON writes the next msgpack value of dec as JSON: maps keep their
// key order, bin values become base64 strings (encoding/json's rule).
func valueJSON(w *bufio.Writer, dec *msgpack.Decoder) error {
	code, err := dec.PeekCode()
	if err != nil {
		return err
	}
	switch {
	case msgpcode.IsFixedMap(code) || code == msgpcode.Map16 || code == msgpcode.Map32:
		return mapJSON(w, dec)
	case msgpcode.IsFixedArray(code) || code == msgpcode.Array16 || code == msgpcode.Array32:
		return arrayJSON(w, dec)
	}
	v, err := dec.DecodeInterface()
	if err != nil {
		return err
	}
	return writeJSON(w, v)
}

// writeJSON writes v as JSON without HTML escaping: a command's "&&" stays
// readable.
func writeJSON(w *bufio.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return err
}

func mapJSON(w *bufio.Writer, dec *msgpack.Decoder) error {
	n, err := dec.DecodeMapLen()
	if err != nil {
		return err
	}
	w.WriteByte('{')
	for i := 0; i < n; i++ {
		if i > 0 {
			w.WriteString(", ")
		}
		key, err := dec.DecodeInterface()
		if err != nil {
			return err
		}
		if err := writeJSON(w, fmt.Sprint(key)); err != nil {
			return err
		}
		w.WriteString(": ")
		if err := valueJSON(w, dec); err != nil {
			return err
		}
	}
	return w.WriteByte('}')
}

func arrayJSON(w *bufio.Writer, dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	w.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			w.WriteString(", ")
		}
		if err := valueJSON(w, dec); err != nil {
			return err
		}
	}
	return w.WriteByte(']')
}
