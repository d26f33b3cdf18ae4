//go:build linux

package shellsup

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestSandboxValidated: a bad Sandbox, workspace-write without Workspace
// and Protect without workspace-write are refused before anything runs.
func TestSandboxValidated(t *testing.T) {
	for _, c := range []struct {
		req Request
		msg string
	}{
		{Request{Sandbox: "full"}, `sandbox must be one of read-only, workspace-write, none (got "full")`},
		{Request{Sandbox: SandboxWorkspaceWrite}, "sandbox workspace-write needs --workspace DIR"},
		{Request{Sandbox: SandboxReadOnly, Protect: []string{".git"}}, "needs --sandbox workspace-write"},
		{Request{Sandbox: SandboxWorkspaceWrite, Workspace: "/tmp", Protect: []string{""}}, `protect must be a directory in the workspace, without NUL bytes (got "")`},
	} {
		c.req.Command, c.req.Binary = "true", "/nonexistent/shellsup" // refused before any binary is looked for
		_, err := Run(context.Background(), c.req)
		e := requireCategory(t, err, CategoryValidation)
		assert.Contains(t, e.Message, c.msg)
		_, err = Start(context.Background(), c.req)
		requireCategory(t, err, CategoryValidation)
	}
}

// TestSandboxRunAndJob: Request.Sandbox and Request.Network reach
// shellsup for Run and Start: writes outside the workspace fail, inside
// it and in the private TMPDIR they work, the host's listener is out of
// reach, and the job's leftovers are cleaned up as any job's.
func TestSandboxRunAndJob(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	ws, outside := t.TempDir(), t.TempDir()
	cmd := `setsid sleep 300 </dev/null >/dev/null 2>&1 &
echo x > ` + outside + `/x 2>/dev/null || echo denied-outside
echo x > in && echo wrote-inside
echo t > "$TMPDIR/t" && echo wrote-tmp
{ echo > /dev/tcp/127.0.0.1/` + port + `; } 2>/dev/null || echo no-host-network`
	want := "denied-outside\nwrote-inside\nwrote-tmp\nno-host-network\n"
	req := newRequest(t, cmd)
	req.NoLogin, req.Sandbox, req.Workspace, req.Network = true, SandboxWorkspaceWrite, ws, new(false)
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, want, res.Stdout)
	require.NotNil(t, res.Sandbox)
	assert.Equal(t, SandboxWorkspaceWrite, res.Sandbox.Mode)
	assert.Equal(t, ws, res.Sandbox.Writable[0])
	assert.NotEqual(t, "host", res.Sandbox.Network)
	assert.NoDirExists(t, res.Sandbox.TmpDir)
	assert.GreaterOrEqual(t, res.Cleanup.TmpRemoved, 2)
	assert.NoFileExists(t, filepath.Join(outside, "x"))
	require.NoError(t, os.Remove(filepath.Join(ws, "in")))

	req = newRequest(t, cmd)
	req.NoLogin, req.Sandbox, req.Workspace, req.Network = true, SandboxWorkspaceWrite, ws, new(false)
	job := startJob(t, req)
	res, err = job.Wait(context.Background())
	require.NoError(t, err)
	assert.Equal(t, want, res.Stdout)
	assert.True(t, res.Cleanup.Clean())
	assert.GreaterOrEqual(t, res.Cleanup.Signalled, 1, "the setsid sleeper")
	assert.NoDirExists(t, res.Sandbox.TmpDir)
}

// tcpProbe tries the host's listener on 127.0.0.1 at port: a plain
// connect, a Multipath TCP socket and a TCP Fast Open sendto (the last two
// pass beside Landlock's TCP rules without shellsup's seccomp filter).
func tcpProbe(port string) string {
	return `python3 -c 'import socket; socket.create_connection(("127.0.0.1", ` + port + `), timeout=2)' 2>/dev/null; echo "tcp rc=$?"
python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262); s.settimeout(2); s.connect(("127.0.0.1", ` + port + `))' 2>/dev/null; echo "mptcp rc=$?"
python3 -c 'import socket; s = socket.socket(); s.sendto(b"GET / HTTP/1.0\r\n\r\n", socket.MSG_FASTOPEN, ("127.0.0.1", ` + port + `))' 2>/dev/null; echo "fastopen rc=$?"
`
}

// TestSandboxNetworkAsNobody is the review's finding 1 (2026-12-02): an
// unprivileged shellsup with Network false and the binding's default
// (--pidns-auto, a PID namespace where nobody has no delegated cgroup)
// got the Landlock TCP rules, which Multipath TCP and TCP Fast Open
// passed, and reached the host's 127.0.0.1. Now the default gets a network
// namespace; with NoPIDNamespace the TCP rules, whose seccomp filter
// refuses both. Nothing reaches the listener either way.
func TestSandboxNetworkAsNobody(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run shellsup as nobody")
	}
	dir := nobodyDir(t)
	bin := asNobody(t, dir)
	for _, c := range []struct {
		name, network, via string
		noPIDNS            bool
	}{
		{"default", "loopback", "netns", false},
		{"NoPIDNamespace", "none", "landlock-tcp+landlock-scope", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer l.Close()
			req := newRequest(t, tcpProbe(strconv.Itoa(l.Addr().(*net.TCPAddr).Port)))
			req.Binary, req.Cwd, req.Env[0] = bin, dir, "HOME="+dir
			req.NoLogin, req.Network, req.NoPIDNamespace = true, new(false), c.noPIDNS
			res, err := Run(context.Background(), req)
			require.NoError(t, err)
			require.NotNil(t, res.Sandbox)
			assert.Equal(t, c.network, res.Sandbox.Network)
			assert.Equal(t, c.via, res.Sandbox.Via)
			assert.Equal(t, "tcp rc=1\nmptcp rc=1\nfastopen rc=1\n", res.Stdout, "none reaches the host's listener")
			assert.False(t, pending(t, l.(*net.TCPListener)), "the host's listener was reached")
		})
	}
}

// pending: a connection waits in l's accept queue (taken off it, without
// blocking).
func pending(t *testing.T, l *net.TCPListener) bool {
	raw, err := l.SyscallConn()
	require.NoError(t, err)
	var acceptErr error
	require.NoError(t, raw.Control(func(fd uintptr) {
		var nfd int
		if nfd, _, acceptErr = unix.Accept4(int(fd), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC); acceptErr == nil {
			unix.Close(nfd)
		}
	}))
	if acceptErr != nil {
		require.ErrorIs(t, acceptErr, unix.EAGAIN)
		return false
	}
	return true
}
