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
	"strings"
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
	command := fmt.Sprintf(`setsid %[1]s -u -c 'import os, socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0))
os.write(1, b"udp %%d\n" %% s.getsockname()[1]); time.sleep(60)' &
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

// TestPortsOtherNetnsNotReported: a stranger listens on host 127.0.0.1:P;
// the job listens on P too, but inside a network namespace of its own
// (unshare -rn), and on another port in shellsup's namespace. The answer
// names the host-namespace listener and not P, asked about all ports or
// about P alone: a connection to P here would reach the stranger.
func TestPortsOtherNetnsNotReported(t *testing.T) { netnsTrap(t) }

// TestPortsOtherNetnsNotReportedPidns: the same under --pidns, which
// makes a PID namespace and no network namespace, so the command's
// listeners are still in shellsup's and are found.
func TestPortsOtherNetnsNotReportedPidns(t *testing.T) { netnsTrap(t, "--pidns", "--require", "pidns") }

func netnsTrap(t *testing.T, args ...string) {
	if err := exec.Command("unshare", "-rn", "true").Run(); err != nil {
		t.Skipf("unshare -rn is not available here: %v", err)
	}
	strangerPort, strangerPid := stranger(t)
	// Each line is one write(2): the two listeners print at the same time.
	command := fmt.Sprintf(`timeout 60 unshare -rn %[1]s -c 'import os, socket, time
s = socket.socket(); s.bind(("0.0.0.0", %[2]d)); s.listen()
os.write(1, b"netns up\n"); time.sleep(60)' &
timeout 60 %[1]s -c 'import os, socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
os.write(1, b"host %%d\n" %% s.getsockname()[1]); time.sleep(60)' &
wait`, python, strangerPort)
	hostRe := regexp.MustCompile(`host (\d+)\n`)
	var (
		once     sync.Once
		answers  []*protocol.Ports
		hostPort int
	)
	r := runShellsup(t, opts{
		args: append([]string{"--lifetime", "60"}, args...), command: command, control: true, owned: []int{strangerPid},
		onFrame: func(r *running, f protocol.Frame) {
			if p, ok := f.(*protocol.Ports); ok {
				answers = append(answers, p)
				if len(answers) == 2 {
					require.NoError(t, r.send(&protocol.Cancel{}))
				}
				return
			}
			text := r.stdoutSoFar()
			if m := hostRe.FindStringSubmatch(text); m != nil && regexp.MustCompile(`netns up\n`).MatchString(text) {
				once.Do(func() {
					hostPort, _ = strconv.Atoi(m[1])
					require.NoError(t, r.send(&protocol.Ports{}))
					require.NoError(t, r.send(&protocol.Ports{Ports: []protocol.Port{{Port: strangerPort}}}))
				})
			}
		},
	})
	tot := requireTotals(t, r)
	require.Len(t, answers, 2, "stdout %q stderr %q", tot.Stdout, tot.Stderr)
	all, asked := answers[0], answers[1]
	assert.Equal(t, []protocol.Port{{Proto: "tcp", Addr: "127.0.0.1", Port: hostPort, Pid: all.Ports[0].Pid}}, all.Ports,
		"only the host-namespace listener; not the one in the job's own netns on the stranger's port %d", strangerPort)
	assert.Zero(t, all.Omitted)
	assert.Empty(t, asked.Ports, "asked about port %d: the job's listener there is in another netns", strangerPort)
	assert.NotNil(t, asked.Ports)
}

// TestPortsManyListenersCut: 8 processes × 1000 TCP listeners, in a
// network namespace made for shellsup itself (so the listeners are in its
// namespace and no host port is taken). The answer still comes: the 4096
// lowest ports, sorted, once each, with omitted counting the other 3904;
// a query naming a port past the cut gets it.
func TestPortsManyListenersCut(t *testing.T) {
	if err := exec.Command("unshare", "-rn", "true").Run(); err != nil {
		t.Skipf("unshare -rn is not available here: %v", err)
	}
	const procs, each, base = 8, 1000, 20000
	wrapper := filepath.Join(t.TempDir(), "shellsup-in-netns")
	require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\nexec unshare -rn "+shellsupBin+` "$@"`+"\n"), 0o755))
	command := fmt.Sprintf(`for i in $(seq 0 %[2]d); do timeout 60 %[1]s -u -c 'import os, resource, socket, sys, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
base = %[3]d + int(sys.argv[1]) * %[4]d
socks = []
for p in range(base, base + %[4]d):
    s = socket.socket(); s.bind(("0.0.0.0", p)); s.listen(1); socks.append(s)
os.write(1, b"up\n"); time.sleep(60)' $i & done; wait`, python, procs-1, base, each)
	var (
		once    sync.Once
		answers []*protocol.Ports
	)
	last := base + procs*each - 1
	r := runShellsup(t, opts{
		bin: wrapper, args: []string{"--lifetime", "60"}, command: command, control: true,
		onFrame: func(r *running, f protocol.Frame) {
			if p, ok := f.(*protocol.Ports); ok {
				answers = append(answers, p)
				if len(answers) == 2 {
					require.NoError(t, r.send(&protocol.Cancel{}))
				}
				return
			}
			if strings.Count(r.stdoutSoFar(), "up") == procs { // lines may interleave
				once.Do(func() {
					require.NoError(t, r.send(&protocol.Ports{}))
					require.NoError(t, r.send(&protocol.Ports{Ports: []protocol.Port{{Port: last}}}))
				})
			}
		},
	})
	tot := requireTotals(t, r)
	require.Len(t, answers, 2, "stdout %q stderr %q", tot.Stdout, tot.Stderr)
	all, asked := answers[0], answers[1]
	require.Len(t, all.Ports, protocol.MaxPorts)
	assert.Equal(t, procs*each-protocol.MaxPorts, all.Omitted)
	for i, p := range all.Ports {
		require.Equal(t, base+i, p.Port, "sorted by port, each once")
		require.Equal(t, "tcp", p.Proto)
	}
	require.Len(t, asked.Ports, 1)
	assert.Equal(t, last, asked.Ports[0].Port)
	assert.Zero(t, asked.Omitted)
}
