//go:build linux

package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/protocol"
)

// python is Debian's interpreter: a pyenv shim needs the real HOME, and the
// tests give shellsup a clean one.
const python = "/usr/bin/python3"

// stranger is a TCP listener on 127.0.0.1 that the test starts itself,
// outside any shellsup tree; it exits by itself after a minute.
func stranger(t *testing.T) (port, pid int) {
	t.Helper()
	if _, err := os.Stat(python); err != nil {
		t.Skip(python + " is needed to listen on a port")
	}
	cmd := exec.Command(python, "-u", "-c", `import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1]); time.sleep(60)`)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) // ours, by pid
	line, err := readLine(bufio.NewReader(out), 20*time.Second)
	require.NoError(t, err)
	port, err = strconv.Atoi(line[:len(line)-1])
	require.NoError(t, err, "stranger printed %q", line)
	return port, cmd.Process.Pid
}

// descendantOf reports whether pid descends from root.
func descendantOf(pid, root int) bool {
	for i := 0; i < 64 && pid > 1; i++ {
		pid = proctest.PPid(pid)
		if pid == root {
			return true
		}
	}
	return false
}

var (
	servingRe = regexp.MustCompile(`Serving HTTP on 127\.0\.0\.1 port (\d+)`)
	udpRe     = regexp.MustCompile(`udp (\d+)\n`)
)

// TestPortsOfTheTree: a real http.server and a setsid UDP daemon run under
// shellsup; a ports query names both ports, each with a pid of the tree,
// and not the port a stranger listens on.
func TestPortsOfTheTree(t *testing.T) {
	strangerPort, strangerPid := stranger(t)
	command := fmt.Sprintf(`setsid %[1]s -u -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0))
print("udp", s.getsockname()[1]); time.sleep(60)' &
timeout 60 %[1]s -u -m http.server 0 --bind 127.0.0.1`, python)
	var (
		once               sync.Once
		answer             *protocol.Ports
		httpPort, udpPort  int
		inTree, httpStatus = map[int]bool{}, 0
	)
	r := runShellsup(t, opts{
		args: []string{"--lifetime", "60"}, command: command, control: true, owned: []int{strangerPid},
		onFrame: func(r *running, f protocol.Frame) {
			if p, ok := f.(*protocol.Ports); ok && answer == nil {
				answer = p
				for _, port := range p.Ports {
					inTree[port.Pid] = descendantOf(port.Pid, r.cmd.Process.Pid)
				}
				if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", httpPort)); err == nil {
					httpStatus = resp.StatusCode
					resp.Body.Close()
				}
				require.NoError(t, r.send(&protocol.Cancel{}))
				return
			}
			text := r.stdoutSoFar() + r.text["stderr"].String() // http.server logs to stderr
			hm, um := servingRe.FindStringSubmatch(text), udpRe.FindStringSubmatch(text)
			if hm != nil && um != nil {
				once.Do(func() {
					httpPort, _ = strconv.Atoi(hm[1])
					udpPort, _ = strconv.Atoi(um[1])
					require.NoError(t, r.send(&protocol.Ports{}))
				})
			}
		},
	})
	tot := requireTotals(t, r)
	require.NotNil(t, answer, "no ports answer; stdout %q stderr %q", tot.Stdout, tot.Stderr)
	assert.True(t, tot.Cancelled)
	found := map[string]protocol.Port{}
	for _, p := range answer.Ports {
		found[fmt.Sprintf("%s/%d", p.Proto, p.Port)] = p
		assert.True(t, inTree[p.Pid], "port %v: pid %d is not in shellsup's tree", p, p.Pid)
		assert.NotEqual(t, strangerPort, p.Port, "a stranger's port was taken for the tree's")
	}
	require.Contains(t, found, fmt.Sprintf("tcp/%d", httpPort), "answer %+v", answer.Ports)
	require.Contains(t, found, fmt.Sprintf("udp/%d", udpPort), "answer %+v", answer.Ports)
	assert.Equal(t, "127.0.0.1", found[fmt.Sprintf("tcp/%d", httpPort)].Addr)
	assert.Equal(t, 200, httpStatus, "the server answered")
}

// A tree with no listener answers an empty list; the answer comes between
// progress frames, before totals, and a query is not a cancel.
func TestPortsNone(t *testing.T) {
	answered := false
	flag := filepath.Join(t.TempDir(), "answered")
	r := runShellsup(t, opts{
		command: fmt.Sprintf("echo ready; for i in $(seq 600); do [ -e %s ] && break; sleep 0.1; done; echo done", flag), control: true,
		onFrame: func(r *running, f protocol.Frame) {
			switch f := f.(type) {
			case *protocol.Progress:
				if f.Text == "ready\n" {
					require.NoError(t, r.send(&protocol.Ports{}))
				}
			case *protocol.Ports:
				answered = true
				require.NoError(t, os.WriteFile(flag, nil, 0o600))
				assert.NotNil(t, f.Ports)
				assert.Empty(t, f.Ports)
			}
		},
	})
	tot := requireTotals(t, r)
	assert.True(t, answered, "frames %v", r.frameTypes())
	assert.False(t, tot.Cancelled)
	assert.Equal(t, 0, *tot.ExitCode)
	assert.Equal(t, "ready\ndone\n", tot.Stdout)
}
