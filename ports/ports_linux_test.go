package ports

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

	mine, err := Listening("/proc", []int{os.Getpid()})
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
		theirs, err = Listening("/proc", []int{stranger.Process.Pid})
		require.NoError(t, err)
		if len(theirs) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	assert.Equal(t, []Port{{Proto: "tcp", Addr: "127.0.0.1", Port: strangerPort, Pid: stranger.Process.Pid}}, theirs)
}

func TestGoneProcessesAreSkipped(t *testing.T) {
	ps, err := Listening("/proc", []int{1 << 30})
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
