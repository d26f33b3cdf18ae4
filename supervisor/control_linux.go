package supervisor

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/linux"
	"github.com/shellsup/shellsup/protocol"
)

// isControlChannel reports whether f is a pipe or a socket, which in frames
// mode makes it the control channel. /dev/null, a terminal, a regular file
// or a closed fd is not, and is never read.
func isControlChannel(f *os.File) bool {
	var st unix.Stat_t
	if err := linux.Fstat(int(f.Fd()), &st); err != nil {
		return false // a closed fd (EBADF) is no channel
	}
	mode := st.Mode & unix.S_IFMT
	return mode == unix.S_IFIFO || mode == unix.S_IFSOCK
}

// watchControl reads control frames from r until it fails, turning them
// into cancel reasons: a cancel frame is "request", end of stream between
// frames (or a read error) is "parent-gone", a malformed, oversized or
// truncated frame is "protocol". A ports frame is a query, which ports
// answers (the frame says which port numbers it asks about). The input,
// eof, signal and resize frames of an interactive run go to input (nil:
// ignored). Unknown frame types are ignored.
func watchControl(r io.Reader, cancel func(reason string), ports func(query *protocol.Ports), input func(protocol.Frame)) {
	dec := protocol.NewDecoder(r)
	for {
		var f protocol.Frame
		err := dec.Decode(&f)
		var fe *protocol.FrameError
		switch {
		case err == nil:
			switch f := f.(type) {
			case *protocol.Cancel:
				cancel(protocol.ReasonRequest)
			case *protocol.Ports:
				ports(f)
			default:
				if input != nil && interactiveFrame(f) {
					input(f)
				}
			}
			continue
		case errors.As(err, &fe) && (!errors.Is(err, protocol.ErrTruncated) || errors.Is(err, io.ErrUnexpectedEOF)):
			// Oversized, malformed, or cut off by the end of the stream.
			cancel(protocol.ReasonProtocol)
		default:
			// io.EOF between frames, or a read error (ECONNRESET on a
			// socket): the parent is gone.
			cancel(protocol.ReasonParentGone)
		}
		return
	}
}
