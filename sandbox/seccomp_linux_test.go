package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// tcpListener listens on 127.0.0.1; reached says how many connections it
// accepted since the last call, counted up to a connection of its own
// (accepted in order, after every earlier one).
func tcpListener(t *testing.T) (to *unix.SockaddrInet4, reached func() int) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	conns := make(chan net.Conn)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(conns)
				return
			}
			conns <- c
		}
	}()
	reached = func() int {
		mark, err := net.Dial("tcp", l.Addr().String())
		require.NoError(t, err)
		defer mark.Close()
		n := 0
		for c := range conns {
			c.Close()
			if c.RemoteAddr().String() == mark.LocalAddr().String() {
				return n
			}
			n++
		}
		t.Fatal("the listener closed")
		return n
	}
	return &unix.SockaddrInet4{Port: l.Addr().(*net.TCPAddr).Port, Addr: [4]byte{127, 0, 0, 1}}, reached
}

// bypasses tries each way to a TCP peer that the Landlock TCP rules do not
// see, and the ones they do, from the calling thread: the errno of each.
func bypasses(to *unix.SockaddrInet4) map[string]error {
	r := map[string]error{}
	try := func(name string, proto int, f func(fd int) error) {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, proto)
		if err == nil {
			err = f(fd)
			unix.Close(fd)
		}
		r[name] = err
	}
	req := []byte("GET / HTTP/1.0\r\n\r\n")
	connect := func(fd int) error { return unix.Connect(fd, to) }
	try("connect", 0, connect)
	try("mptcp connect", unix.IPPROTO_MPTCP, connect)
	try("fastopen sendto", 0, func(fd int) error { return unix.Sendto(fd, req, unix.MSG_FASTOPEN, to) })
	try("fastopen sendmsg", 0, func(fd int) error { return unix.Sendmsg(fd, req, nil, to, unix.MSG_FASTOPEN) })
	try("fastopen sendmmsg", 0, func(fd int) error {
		_, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), 0, 0, unix.MSG_FASTOPEN, 0, 0)
		return errnoErr(errno)
	})
	try("TCP_FASTOPEN_CONNECT connect", 0, func(fd int) error {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_FASTOPEN_CONNECT, 1); err != nil {
			return err
		}
		return connect(fd)
	})
	var params [120]byte
	_, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
	r["io_uring_setup"] = errnoErr(errno)
	return r
}

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// TestSeccompTCPBypasses: under the Landlock TCP rules, Multipath TCP,
// TCP Fast Open and io_uring are refused (EPERM) by the filter, a plain
// connect by Landlock (EACCES), and nothing reaches the listener; on an
// unrestricted thread the same attempts reach it (the control: they are
// real bypasses without the filter).
func TestSeccompTCPBypasses(t *testing.T) {
	if Probe().LandlockABI < MinABITCP || !Probe().Seccomp {
		t.Skipf("needs Landlock ABI %d and seccomp (this kernel: %+v)", MinABITCP, Probe())
	}
	to, reached := tcpListener(t)
	free := bypasses(to)
	assert.NoError(t, free["mptcp connect"], "control: MPTCP connects without the rules")
	assert.NoError(t, free["fastopen sendto"], "control: a Fast Open sendto connects without the rules")
	assert.NoError(t, free["io_uring_setup"], "control: io_uring_setup")
	require.Positive(t, reached(), "control: the attempts reach the listener")

	var got map[string]error
	var restrictErr error
	OnThread(func() {
		if restrictErr = Restrict(&Policy{Mode: ModeNone, NoNetwork: true, LandlockTCP: true}); restrictErr == nil {
			got = bypasses(to)
		}
	})
	require.NoError(t, restrictErr)
	assert.ErrorIs(t, got["connect"], unix.EACCES, "Landlock refuses a plain connect")
	assert.ErrorIs(t, got["TCP_FASTOPEN_CONNECT connect"], unix.EACCES, "its connect(2) is Landlock's to refuse")
	for _, name := range []string{"mptcp connect", "fastopen sendto", "fastopen sendmsg", "fastopen sendmmsg", "io_uring_setup"} {
		assert.ErrorIs(t, got[name], unix.EPERM, name)
	}
	assert.Zero(t, reached(), "the listener was reached")
}

// TestSeccompLetsTheRestThrough: the filter refuses only what it names: a
// UDP send (without MSG_FASTOPEN), a plain TCP socket and a setsockopt
// still work under it; on x86-64 an x32 system call is refused.
func TestSeccompLetsTheRestThrough(t *testing.T) {
	if Probe().LandlockABI < MinABITCP || !Probe().Seccomp {
		t.Skipf("needs Landlock ABI %d and seccomp (this kernel: %+v)", MinABITCP, Probe())
	}
	u, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer u.Close()
	to := &unix.SockaddrInet4{Port: u.LocalAddr().(*net.UDPAddr).Port, Addr: [4]byte{127, 0, 0, 1}}
	var sendErr, sockErr, optErr, x32Err error
	OnThread(func() {
		if sendErr = Restrict(&Policy{Mode: ModeNone, NoNetwork: true, LandlockTCP: true}); sendErr != nil {
			return
		}
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if sendErr = err; err == nil {
			sendErr = unix.Sendto(fd, []byte("x"), 0, to)
			unix.Close(fd)
		}
		fd, sockErr = unix.Socket(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if sockErr == nil {
			optErr = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1)
			unix.Close(fd)
		}
		if runtime.GOARCH == "amd64" {
			_, _, errno := unix.Syscall(x32Bit|unix.SYS_GETPID, 0, 0, 0)
			x32Err = errnoErr(errno)
		}
	})
	assert.NoError(t, sendErr, "UDP is not the filter's (a documented hole of landlock-tcp)")
	assert.NoError(t, sockErr)
	assert.NoError(t, optErr)
	if runtime.GOARCH == "amd64" {
		assert.ErrorIs(t, x32Err, unix.EPERM, "an x32 system call")
	}
	buf := make([]byte, 1)
	n, _, err := u.ReadFrom(buf)
	assert.NoError(t, err)
	assert.Equal(t, 1, n)
}

// netHandle is the nsfs handle of the calling thread's network namespace.
func netHandle(t *testing.T) unix.FileHandle {
	fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	h, _, err := unix.NameToHandleAt(fd, "", unix.AT_EMPTY_PATH)
	require.NoError(t, err)
	return h
}

// openHandle opens h from nsfs's root (FD_NSFS_ROOT), closing what it got.
func openHandle(h unix.FileHandle) error {
	fd, err := unix.OpenByHandleAt(-10003, h, unix.O_RDONLY|unix.O_CLOEXEC)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// TestHoldInTheNamespace is what keeps a root command in its network
// namespace (planHold; fifth review, finding 5), on a thread: the bare
// Landlock domain (p.Domain) makes a process outside it refuse
// /proc/PID/ns/net (EACCES) while the thread's own namespace files open
// (the process's other threads would not show it: a thread group never
// checks itself); the seccomp filter (p.NoHandles) refuses open_by_handle_at, in
// x32 too, and io_uring_setup (EPERM), and lets the rest through (an x32
// getpid, name_to_handle_at). The control: unrestricted, the handle opens.
func TestHoldInTheNamespace(t *testing.T) {
	if os.Geteuid() != 0 || Probe().LandlockABI < MinABIScope || !Probe().Seccomp || !Probe().NSHandles {
		t.Skipf("needs root, Landlock ABI %d, seccomp and nsfs handles (this kernel: %+v)", MinABIScope, Probe())
	}
	h := netHandle(t)
	require.NoError(t, openHandle(h), "control: the handle opens without the filter")
	outside := exec.Command("sleep", "30") // started from an unrestricted thread: outside the domain
	require.NoError(t, outside.Start())
	defer func() { _ = outside.Process.Kill(); _ = outside.Wait() }()
	other := fmt.Sprintf("/proc/%d/ns/net", outside.Process.Pid)
	got := map[string]error{}
	var restrictErr error
	OnThread(func() {
		if restrictErr = Restrict(&Policy{Mode: ModeNone, NoNetwork: true, Domain: true, NoHandles: true}); restrictErr != nil {
			return
		}
		_, got["outside ns"] = os.Open(other)
		_, got["own ns"] = os.Open("/proc/thread-self/ns/net")
		got["handle"] = openHandle(h)
		fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if got["name_to_handle_at"] = err; err == nil {
			_, _, got["name_to_handle_at"] = unix.NameToHandleAt(fd, "", unix.AT_EMPTY_PATH)
			unix.Close(fd)
		}
		var params [120]byte
		_, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
		got["io_uring_setup"] = errnoErr(errno)
		if runtime.GOARCH == "amd64" {
			_, _, errno = unix.Syscall(x32Bit|unix.SYS_OPEN_BY_HANDLE_AT, 0, 0, 0)
			got["x32 open_by_handle_at"] = errnoErr(errno)
			_, _, errno = unix.Syscall(x32Bit|unix.SYS_GETPID, 0, 0, 0)
			got["x32 getpid"] = errnoErr(errno)
		}
	})
	require.NoError(t, restrictErr)
	assert.ErrorIs(t, got["outside ns"], unix.EACCES, "the domain: a process outside refuses ptrace access")
	assert.NoError(t, got["own ns"])
	assert.NoError(t, got["name_to_handle_at"])
	assert.ErrorIs(t, got["handle"], unix.EPERM)
	assert.ErrorIs(t, got["io_uring_setup"], unix.EPERM)
	if runtime.GOARCH == "amd64" {
		assert.ErrorIs(t, got["x32 open_by_handle_at"], unix.EPERM)
		assert.NotErrorIs(t, got["x32 getpid"], unix.EPERM, "x32 runs on under this filter (ENOSYS where the kernel has no x32)")
	}
}
