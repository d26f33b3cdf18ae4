package supervisor

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/linux"
	"github.com/shellsup/shellsup/protocol"
)

// watchParent cancels the run (reason parent-gone) as soon as shellsup's
// parent process exits, or its stdout or stderr, when a pipe or a socket
// (the bindings give shellsup socketpairs), loses its reader, in every mode and without waiting for a write to fail. The
// parent is watched through a pidfd opened at start and checked against
// getppid() afterwards: a parent that died before the pidfd was opened
// (since ppid was read, at start) has already reparented shellsup. stop ends
// the watch.
func watchParent(ppid int, stdio Stdio, cancel func(reason string)) (stop func()) {
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return func() {} // EPIPE and the control channel still tell
	}
	fds := []unix.PollFd{{Fd: int32(wake), Events: unix.POLLIN}}
	pidfd, watched := -1, false
	if orphanedAtStart(ppid) {
		cancel(protocol.ReasonParentGone) // gone before shellsup started (parentstart_linux.go)
	} else if ppid > 1 { // 1: init never dies; 0: the parent is outside shellsup's PID namespace
		if pidfd, err = unix.PidfdOpen(ppid, 0); err != nil {
			pidfd = -1
		}
		switch {
		case os.Getppid() != ppid:
			cancel(protocol.ReasonParentGone) // the pidfd, if any, may name a stranger
		case err == nil:
			fds = append(fds, unix.PollFd{Fd: int32(pidfd), Events: unix.POLLIN})
			watched = true
		}
	}
	for _, f := range []*os.File{stdio.Stdout, stdio.Stderr} {
		if fd, ok := streamFd(f); ok {
			// POLLERR (a pipe) or POLLHUP (a socket whose peer closed): no reader left
			fds = append(fds, unix.PollFd{Fd: int32(fd), Events: 0})
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if pollParent(fds) {
			cancel(goneReason(fds, watched))
		}
		if pidfd >= 0 {
			unix.Close(pidfd)
		}
		unix.Close(wake)
	}()
	return func() {
		_, _ = unix.Write(wake, []byte{1, 0, 0, 0, 0, 0, 0, 0})
		<-done
	}
}

// pollParent blocks until one of fds (after the wake-up eventfd) reports
// the parent gone, true, or the eventfd is written, false.
func pollParent(fds []unix.PollFd) bool {
	for {
		_, err := linux.Poll(fds, -1)
		if err != nil || fds[0].Revents != 0 {
			return false
		}
		for _, p := range fds[1:] {
			if p.Revents&(unix.POLLIN|unix.POLLERR|unix.POLLHUP) != 0 {
				return true
			}
		}
	}
}

// streamFd is f's fd if f is a pipe or a socket. (SyscallConn, unlike Fd,
// leaves the file's blocking mode alone.)
func streamFd(f *os.File) (int, bool) {
	if f == nil {
		return -1, false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, false
	}
	fd, stream := -1, false
	_ = rc.Control(func(u uintptr) {
		var st unix.Stat_t
		mode := uint32(0)
		if unix.Fstat(int(u), &st) == nil {
			mode = st.Mode & unix.S_IFMT
		}
		fd, stream = int(u), mode == unix.S_IFIFO || mode == unix.S_IFSOCK
	})
	return fd, stream
}

// goneReason says what pollParent saw: the parent's pidfd (fds[1] when
// watched) parent-gone, else a stream without reader, reasonOutputGone.
func goneReason(fds []unix.PollFd, pidfdWatched bool) string {
	if pidfdWatched && fds[1].Revents != 0 {
		return protocol.ReasonParentGone
	}
	return reasonOutputGone
}
