//go:build !linux

package ports

import "errors"

// ErrUnsupported is returned on systems other than Linux.
var ErrUnsupported = errors.New("ports: only supported on Linux")

// Port is one listening socket.
type Port struct {
	Proto string `msgpack:"proto"`
	Addr  string `msgpack:"addr"`
	Port  int    `msgpack:"port"`
	Pid   int    `msgpack:"pid"`
}

// Listening returns ErrUnsupported.
func Listening(string, []int) ([]Port, error) { return nil, ErrUnsupported }
