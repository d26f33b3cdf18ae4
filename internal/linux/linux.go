//go:build linux

package linux

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Pipe2 wraps pipe2(2).
func Pipe2(p []int, flags int) error {
	err := retryOnEINTR(func() error { return unix.Pipe2(p, flags) })
	return os.NewSyscallError("pipe2", err)
}

// Fstat wraps fstat(2); a FUSE file system may interrupt it.
func Fstat(fd int, st *unix.Stat_t) error {
	err := retryOnEINTR(func() error { return unix.Fstat(fd, st) })
	return os.NewSyscallError("fstat", err)
}

// SetPipeSize wraps fcntl(2) F_SETPIPE_SZ and returns the size the kernel
// chose.
func SetPipeSize(fd, size int) (int, error) {
	n, err := retryOnEINTR2(func() (int, error) { return unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, size) })
	return n, os.NewSyscallError("fcntl", err)
}

// Splice wraps splice(2) between two descriptors, without offsets. A
// signal that interrupts it before anything moved is retried; EAGAIN on a
// non-blocking splice is returned (errors.Is(err, unix.EAGAIN)).
func Splice(in, out, n, flags int) (int64, error) {
	moved, err := retryOnEINTR2(func() (int64, error) { return unix.Splice(in, nil, out, nil, n, flags) })
	return moved, os.NewSyscallError("splice", err)
}

// Getrlimit wraps getrlimit(2).
func Getrlimit(resource int, rl *unix.Rlimit) error {
	return os.NewSyscallError("getrlimit", unix.Getrlimit(resource, rl))
}

// SetNonblock wraps fcntl(2) F_SETFL with O_NONBLOCK set or cleared.
func SetNonblock(fd int, nonblocking bool) error {
	err := retryOnEINTR(func() error { return unix.SetNonblock(fd, nonblocking) })
	return os.NewSyscallError("fcntl", err)
}

// Open is open(2) with O_CLOEXEC added.
func Open(path string, flags int, mode uint32) (int, error) {
	var fd int
	err := retryOnEINTR(func() (err error) { fd, err = unix.Open(path, flags|unix.O_CLOEXEC, mode); return err })
	if err != nil {
		return -1, os.NewSyscallError("open", err)
	}
	return fd, nil
}

// Read is read(2).
func Read(fd int, buf []byte) (int, error) {
	var n int
	err := retryOnEINTR(func() (err error) { n, err = unix.Read(fd, buf); return err })
	if err != nil {
		return 0, os.NewSyscallError("read", err)
	}
	return n, nil
}

// Pread is pread(2).
func Pread(fd int, buf []byte, off int64) (int, error) {
	var n int
	err := retryOnEINTR(func() (err error) { n, err = unix.Pread(fd, buf, off); return err })
	if err != nil {
		return 0, os.NewSyscallError("pread", err)
	}
	return n, nil
}

// Setrlimit wraps setrlimit(2).
func Setrlimit(resource int, rl *unix.Rlimit) error {
	return os.NewSyscallError("setrlimit", unix.Setrlimit(resource, rl))
}

// PidfdOpen is pidfd_open(2) without flags (PIDFD_NONBLOCK needs Linux
// 5.10; a pidfd that is never waited on does not need it).
func PidfdOpen(pid int) (int, error) {
	var fd int
	err := retryOnEINTR(func() (err error) { fd, err = unix.PidfdOpen(pid, 0); return err })
	if err != nil {
		return -1, os.NewSyscallError("pidfd_open", err)
	}
	return fd, nil
}

// PidfdSendSignal is pidfd_send_signal(2) with no siginfo and no flags.
func PidfdSendSignal(fd int, sig unix.Signal) error {
	if err := retryOnEINTR(func() error { return unix.PidfdSendSignal(fd, sig, nil, 0) }); err != nil {
		return os.NewSyscallError("pidfd_send_signal", err)
	}
	return nil
}

// Kill is kill(2).
func Kill(pid int, sig unix.Signal) error {
	if err := retryOnEINTR(func() error { return unix.Kill(pid, sig) }); err != nil {
		return os.NewSyscallError("kill", err)
	}
	return nil
}

// Waitid is waitid(2). It returns the bare errno (ECHILD is an answer,
// not a failure, to its callers).
func Waitid(idType int, id int, info *unix.Siginfo, options int) error {
	return retryOnEINTR(func() error { return unix.Waitid(idType, id, info, options, nil) })
}

// Wait4 is wait4(2). It returns the bare errno, like Waitid.
func Wait4(pid int, ws *unix.WaitStatus, options int) (int, error) {
	var got int
	err := retryOnEINTR(func() (err error) { got, err = unix.Wait4(pid, ws, options, nil); return err })
	return got, err
}

// Statfs is statfs(2).
func Statfs(path string, st *unix.Statfs_t) error {
	if err := retryOnEINTR(func() error { return unix.Statfs(path, st) }); err != nil {
		return os.NewSyscallError("statfs", err)
	}
	return nil
}

// Write is write(2); it returns what one call wrote (a short write is the
// caller's to continue).
func Write(fd int, buf []byte) (int, error) {
	var n int
	err := retryOnEINTR(func() (err error) { n, err = unix.Write(fd, buf); return err })
	if err != nil {
		return 0, os.NewSyscallError("write", err)
	}
	return n, nil
}

// Poll is poll(2). A signal that interrupts it is retried with what is left
// of timeoutMs (negative: no timeout), so the wait never grows past it;
// time up after an interruption reports 0 ready, as poll would have.
func Poll(fds []unix.PollFd, timeoutMs int) (int, error) {
	deadline := time.Now().Add(time.Duration(timeoutMs) * time.Millisecond)
	for {
		n, err := unix.Poll(fds, timeoutMs)
		if err != unix.EINTR {
			return n, os.NewSyscallError("poll", err)
		}
		if timeoutMs > 0 {
			timeoutMs = max(int(time.Until(deadline).Milliseconds()), 0)
		}
	}
}

// Openat2 is openat2(2). ENOSYS (a kernel before 5.6) is returned as
// errors.Is(err, unix.ENOSYS).
func Openat2(dirfd int, path string, how *unix.OpenHow) (int, error) {
	var fd int
	err := retryOnEINTR(func() (err error) { fd, err = unix.Openat2(dirfd, path, how); return err })
	if err != nil {
		return -1, os.NewSyscallError("openat2", err)
	}
	return fd, nil
}
