package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// grantsOf pins p and lists its grants.
func grantsOf(t *testing.T, p *Policy) []string {
	t.Helper()
	require.NoError(t, p.Pin())
	gs, err := p.Grants()
	require.NoError(t, err)
	defer CloseGrants(gs)
	return grantPaths(gs)
}

// TestGrants: with --protect, every entry beside the way to a protected
// directory gets its own rule, the protected one none, a link none.
func TestGrants(t *testing.T) {
	ws := t.TempDir()
	for _, d := range []string{".git/objects", "src", "docs/a", "docs/b"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "README"), nil, 0o644))
	require.NoError(t, os.Symlink("/", filepath.Join(ws, "root")))
	j := func(s string) string { return filepath.Join(ws, s) }
	p := func(protect ...string) *Policy {
		return &Policy{Mode: ModeWorkspaceWrite, Workspace: ws, Protect: protect}
	}
	assert.Equal(t, []string{ws}, grantsOf(t, p()))
	assert.Equal(t, []string{j("README"), j("docs"), j("src")}, grantsOf(t, p(j(".git"))))
	assert.Equal(t, []string{j("README"), j("docs/b"), j("src")}, grantsOf(t, p(j("docs/a"), j(".git/objects"))))
	assert.Empty(t, grantsOf(t, p(ws)))
	assert.Equal(t, []string{ws}, grantsOf(t, p("/elsewhere")), "a directory outside the workspace changes nothing")
}

// TestGrantsRefuseASwap is review 3's finding 2: a process of the same uid
// swaps a directory on the way to a protected one for a link (to a
// directory outside standing for $HOME), or for another directory, after
// configuration pinned it and before the rules are made. The walk refuses
// rather than make rules outside the workspace (the old path-based listing
// granted every entry of the link's target); so does the workspace itself
// swapped for a link.
func TestGrantsRefuseASwap(t *testing.T) {
	for _, swap := range []string{"link", "exchange", "workspace"} {
		t.Run(swap, func(t *testing.T) {
			base := t.TempDir()
			ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
			for _, d := range []string{"ws/a/b", "ws/z/b", "home/sub"} {
				require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o755))
			}
			require.NoError(t, os.WriteFile(filepath.Join(home, ".bashrc"), nil, 0o644))
			p := &Policy{Mode: ModeWorkspaceWrite, Workspace: ws, Protect: []string{filepath.Join(ws, "a/b")}}
			require.NoError(t, p.Pin())
			switch swap {
			case "link":
				require.NoError(t, os.Symlink(home, filepath.Join(ws, "x")))
				require.NoError(t, unix.Renameat2(unix.AT_FDCWD, filepath.Join(ws, "a"), unix.AT_FDCWD, filepath.Join(ws, "x"), unix.RENAME_EXCHANGE))
			case "exchange":
				require.NoError(t, unix.Renameat2(unix.AT_FDCWD, filepath.Join(ws, "a"), unix.AT_FDCWD, filepath.Join(ws, "z"), unix.RENAME_EXCHANGE))
			case "workspace":
				require.NoError(t, os.Rename(ws, filepath.Join(base, "old")))
				require.NoError(t, os.Symlink(home, ws))
			}
			gs, err := p.Grants()
			CloseGrants(gs)
			require.Error(t, err, "grants %v", grantPaths(gs))
			assert.Empty(t, gs)
			assert.Empty(t, p.grantedNow(), "nor does the report list them")
			done := make(chan error, 1)
			go OnThread(func() { done <- Restrict(p) })
			assert.Error(t, <-done, "Restrict refuses the run")
		})
	}
}

// TestPinsOnTheWire: the --pidns init gets the pins.
func TestPinsOnTheWire(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "a/b"), 0o755))
	p := &Policy{Mode: ModeWorkspaceWrite, Workspace: ws, Protect: []string{filepath.Join(ws, "a/b")}}
	require.NoError(t, p.Pin())
	assert.Len(t, p.Pins, 3)
	q, err := FromWire(p.Wire())
	require.NoError(t, err)
	assert.Equal(t, p.Pins, q.Pins)
	assert.Empty(t, grantsOf(t, q), "a/ holds only b")
}

// TestPinRefusesALinkOnTheWay: configuration itself pins nothing through a
// link (one swapped in after --protect was resolved).
func TestPinRefusesALinkOnTheWay(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "a/b"), 0o755))
	require.NoError(t, os.Rename(filepath.Join(ws, "a"), filepath.Join(ws, "real")))
	require.NoError(t, os.Symlink("real", filepath.Join(ws, "a")))
	p := &Policy{Mode: ModeWorkspaceWrite, Workspace: ws, Protect: []string{filepath.Join(ws, "a/b")}}
	assert.ErrorContains(t, p.Pin(), "no longer a directory")
}
