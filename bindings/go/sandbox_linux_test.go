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
