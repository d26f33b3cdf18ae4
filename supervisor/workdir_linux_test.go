package supervisor

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spawnPwd starts `pwd -P` as the run would, and returns what it printed.
func spawnPwd(t *testing.T, cfg Config) (string, error) {
	t.Helper()
	c, err := spawn(cfg, nil)
	if err != nil {
		return "", err
	}
	defer c.stderr.Close()
	out, rerr := io.ReadAll(c.stdout)
	c.stdout.Close()
	var ws syscall.WaitStatus
	_, werr := syscall.Wait4(c.pid, &ws, 0, nil)
	require.NoError(t, rerr)
	require.NoError(t, werr)
	return strings.TrimSpace(string(out)), nil
}

// TestWorkspaceSwapAfterCheck: the working directory is checked against the
// workspace with every link resolved, and bash starts in the directory that
// was checked. A link swapped after the check to point outside the
// workspace does not take bash there (before, bash changed to the path as
// given and followed the new link); a link swapped into the resolved path
// itself fails the run.
func TestWorkspaceSwapAfterCheck(t *testing.T) {
	ws, outside := workspaceTree(t)
	cfg, err := Args{Workspace: ws, Cwd: filepath.Join(ws, "in"), NoLogin: true, Command: []string{"pwd -P"}}.Validate()
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(ws, "in")))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "in")))
	got, err := spawnPwd(t, cfg)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(ws, "sub"), got, "bash started in the directory checked")

	require.NoError(t, os.Rename(filepath.Join(ws, "sub"), filepath.Join(ws, "sub.old")))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "sub")))
	_, err = spawnPwd(t, cfg)
	require.Error(t, err, "a link in the checked path since the check")
	assert.Contains(t, err.Error(), "no symbolic link on the way")
}
