package ports

import (
	"bufio"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/procstat"
)

// TestOwnListenersFoundStrangersNot: a TCP and a UDP listener of this
// process are found; a listener held by another process (a real python
// server, the stranger) is not reported for this process, and is for its own.
func TestOwnListenersFoundStrangersNot(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer tcp.Close()
	udp, err := net.ListenPacket("udp", "[::1]:0")
	require.NoError(t, err)
	defer udp.Close()

	stranger := exec.Command("python3", "-c", `import socket,time,sys
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(30)`)
	out, err := stranger.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, stranger.Start())
	defer func() { stranger.Process.Kill(); stranger.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	strangerPort, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)

	mine, err := Listening("/proc", procsOf(t, os.Getpid()))
	require.NoError(t, err)
	tcpPort := tcp.Addr().(*net.TCPAddr).Port
	udpPort := udp.LocalAddr().(*net.UDPAddr).Port
	assert.Contains(t, mine, Port{Proto: "tcp", Addr: "127.0.0.1", Port: tcpPort, Pid: os.Getpid()})
	assert.Contains(t, mine, Port{Proto: "udp6", Addr: "::1", Port: udpPort, Pid: os.Getpid()})
	for _, p := range mine {
		assert.NotEqual(t, strangerPort, p.Port, "a stranger's port is not ours")
	}

	deadline := time.Now().Add(10 * time.Second)
	var theirs []Port
	for time.Now().Before(deadline) {
		theirs, err = Listening("/proc", procsOf(t, stranger.Process.Pid))
		require.NoError(t, err)
		if len(theirs) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	assert.Equal(t, []Port{{Proto: "tcp", Addr: "127.0.0.1", Port: strangerPort, Pid: stranger.Process.Pid}}, theirs)
}

func TestGoneProcessesAreSkipped(t *testing.T) {
	ps, err := Listening("/proc", []Proc{{Pid: 1 << 30}})
	require.NoError(t, err)
	assert.Empty(t, ps)
}

func TestParseLine(t *testing.T) {
	e, ok := parseLine("   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 12345 1 0000000000000000 100 0 0 10 0", "tcp")
	require.True(t, ok)
	assert.Equal(t, entry{Port{Proto: "tcp", Addr: "127.0.0.1", Port: 8080}, 12345}, e)
	_, ok = parseLine("   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 12346 1", "tcp")
	assert.False(t, ok, "an established connection is not a listener")
}

// listener starts python3 with the given code (which prints a line when
// its listener is up) under a 30 s self-destruct, and returns its pid and
// the line.
func listener(t *testing.T, argv ...string) (int, string) {
	t.Helper()
	cmd := exec.Command("timeout", append([]string{"30"}, argv...)...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) // ours, by pid
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the listener printed nothing")
	return cmd.Process.Pid, strings.TrimSpace(line)
}

// withChildren lists pid and its children (timeout's child is the python).
func withChildren(t *testing.T, pid int) []int {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
	require.NoError(t, err)
	pids := []int{pid}
	for _, f := range strings.Fields(string(raw)) {
		n, err := strconv.Atoi(f)
		require.NoError(t, err)
		pids = append(pids, n)
	}
	return pids
}

// TestOtherNetnsListenerNotReported: a listener a process made in a
// network namespace of its own (unshare -rn) is not in ours, so it is not
// reported; a socket made in ours and kept across an unshare of the
// network namespace is, as it is reachable here.
func TestOtherNetnsListenerNotReported(t *testing.T) {
	if err := exec.Command("unshare", "-rn", "true").Run(); err != nil {
		t.Skipf("unshare -rn is not available here: %v", err)
	}
	pid, line := listener(t, "unshare", "-rn", "python3", "-u", "-c", `import socket, time
s = socket.socket(); s.bind(("0.0.0.0", 0)); s.listen(); print(s.getsockname()[1]); time.sleep(30)`)
	require.NotEmpty(t, line)
	elsewhere, err := Listening("/proc", procsOf(t, withChildren(t, pid)...))
	require.NoError(t, err)
	assert.Empty(t, elsewhere, "listener on %s in another netns", line)

	pid, line = listener(t, "python3", "-u", "-c", `import ctypes, socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
ok = ctypes.CDLL(None, use_errno=True).unshare(0x40000000) == 0  # CLONE_NEWNET, after the bind
print(s.getsockname()[1], "moved" if ok else "stayed"); time.sleep(30)`)
	port, moved, _ := strings.Cut(line, " ")
	if moved != "moved" {
		t.Skip("unshare(CLONE_NEWNET) needs CAP_SYS_ADMIN")
	}
	kept, err := Listening("/proc", procsOf(t, withChildren(t, pid)...))
	require.NoError(t, err)
	want, err := strconv.Atoi(port)
	require.NoError(t, err)
	require.Len(t, kept, 1, "the socket made here before the unshare")
	assert.Equal(t, want, kept[0].Port)
}

// TestSharedListenerListedOnce: a listening socket two processes hold (a
// pre-forked server) and two SO_REUSEPORT sockets on one port are each one
// entry.
func TestSharedListenerListedOnce(t *testing.T) {
	pid, line := listener(t, "python3", "-u", "-c", `import os, socket, time
a = socket.socket(); a.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1); a.bind(("127.0.0.1", 0)); a.listen()
b = socket.socket(); b.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1); b.bind(a.getsockname()); b.listen()
if os.fork() == 0:
    time.sleep(30); os._exit(0)
print(a.getsockname()[1]); time.sleep(30)`)
	want, err := strconv.Atoi(line)
	require.NoError(t, err)
	var pids []int
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) { // the fork's child may not be listed yet
		pids = withChildren(t, pid)
		if len(pids) == 2 && len(withChildren(t, pids[1])) == 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	pids = append(pids, withChildren(t, pids[1])[1:]...)
	require.Len(t, pids, 3, "timeout, python and its fork")
	got, err := Listening("/proc", procsOf(t, pids...))
	require.NoError(t, err)
	require.Len(t, got, 1, "%+v", got)
	assert.Equal(t, want, got[0].Port)
	assert.Equal(t, min(pids[1], pids[2]), got[0].Pid, "the lowest pid holding it")
}

// procsOf gives each pid with its start time.
func procsOf(t *testing.T, pids ...int) []Proc {
	t.Helper()
	out := make([]Proc, 0, len(pids))
	for _, pid := range pids {
		st, err := procstat.Read("/proc", pid)
		if err != nil {
			continue // exited: Listening skips it too
		}
		out = append(out, Proc{Pid: pid, Start: st.Start})
	}
	return out
}

// TestListenerOfAReusedPidNotReported: a pid given with another start time
// than its process's names a stranger that took a dead member's pid: its
// sockets are not the set's.
func TestListenerOfAReusedPidNotReported(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer tcp.Close()
	me := procsOf(t, os.Getpid())
	require.Len(t, me, 1)
	mine, err := Listening("/proc", me)
	require.NoError(t, err)
	assert.NotEmpty(t, mine, "with the true start time")
	stale := []Proc{{Pid: me[0].Pid, Start: me[0].Start + 1}}
	theirs, err := Listening("/proc", stale)
	require.NoError(t, err)
	assert.Empty(t, theirs, "the pid with a start time that is not its process's")
}

// TestIPv6TextAsNetip pins ipv6 to net/netip's RFC 5952 text.
func TestIPv6TextAsNetip(t *testing.T) {
	cases := [][16]byte{
		{}, {15: 1}, {0: 0x20, 1: 0x01, 2: 0x0d, 3: 0xb8, 15: 1},
		{10: 0xff, 11: 0xff, 12: 127, 15: 1},
		{0: 0xfe, 1: 0x80, 8: 0x12, 9: 0x34, 14: 0xab, 15: 0xcd},
		{0: 1, 4: 1, 8: 1, 12: 1},      // zero runs of one group each
		{0: 1, 6: 1, 14: 1},            // two runs of two: the first
		{1: 1, 3: 1, 5: 1, 7: 1, 9: 1}, // no zero group ... then a run
		{2: 0xff, 3: 0xff, 12: 1, 13: 2, 14: 3, 15: 4},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b [16]byte
		for i := 0; i < 16; i += 2 {
			if r.IntN(2) == 0 {
				b[i], b[i+1] = byte(r.IntN(256)), byte(r.IntN(3))
			}
		}
		cases = append(cases, b)
	}
	for _, b := range cases {
		assert.Equal(t, netip.AddrFrom16(b).Unmap().String(), ipv6(b[:]), "%x", b)
	}
}
