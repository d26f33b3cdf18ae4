package shellsup

import (
	"time"

	"golang.org/x/sys/unix"
)

// controlRoom waits up to d for the control channel to have room for a
// frame of InputChunk bytes: a socket is writable once at most a quarter
// of its send buffer is in use.
func (p *process) controlRoom(d time.Duration) (bool, error) {
	rc, err := p.control.SyscallConn()
	if err != nil {
		return false, err
	}
	room := false
	var perr error
	cerr := rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		n, err := unix.Poll(fds, int(d.Milliseconds()))
		if err != nil && err != unix.EINTR {
			perr = err
			return
		}
		room = n > 0 && fds[0].Revents&unix.POLLOUT != 0
		if fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
			perr = unix.EPIPE
		}
	})
	if cerr != nil {
		return false, cerr
	}
	return room, perr
}
