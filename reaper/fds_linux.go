package reaper

import (
	"errors"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/linux"
)

// reservedSlots is how many low-numbered fds are held for the cleanup. A
// cleanup holds at most two fds at once (a pidfd and the stat file it is
// verified against, or a directory and a file in it).
const reservedSlots = 2

// reserve holds fds opened at process start, so they get the lowest free
// numbers. RLIMIT_NOFILE limits fd numbers, not counts: after the command
// lowers shellsup's limit (prlimit --pid $PPID --nofile=5:5) only fds below
// 5 can be allocated, and only a slot released from here can be.
var reserve = struct {
	sync.Mutex
	fds []int
}{}

func init() { refill() }

// refill tops the reserve up to reservedSlots; it fails quietly when no
// fd can be had (the next open then has fewer slots to fall back on).
func refill() {
	reserve.Lock()
	defer reserve.Unlock()
	for len(reserve.fds) < reservedSlots {
		fd, err := linux.Open("/dev/null", unix.O_RDONLY, 0)
		if err != nil {
			return
		}
		reserve.fds = append(reserve.fds, fd)
	}
}

// release closes one reserved fd, freeing its number for the open that
// follows, and reports whether there was one.
func release() bool {
	reserve.Lock()
	defer reserve.Unlock()
	n := len(reserve.fds)
	if n == 0 {
		return false
	}
	unix.Close(reserve.fds[n-1]) // /dev/null, read-only
	reserve.fds = reserve.fds[:n-1]
	return true
}

// openFd runs open, and if the fd table is full (EMFILE: every number the
// limit allows is taken) runs it again after releasing a reserved slot.
func openFd(open func() (int, error)) (int, error) {
	fd, err := open()
	for errors.Is(err, unix.EMFILE) && release() {
		fd, err = open()
	}
	return fd, err
}

// closeFd closes an fd that holds nothing to flush (a pidfd, a /proc file).
func closeFd(fd int) { unix.Close(fd) }
