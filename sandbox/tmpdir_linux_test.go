package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRemoveTmp: everything goes, a directory the command locked too, and
// a link is removed without touching what it names.
func TestRemoveTmp(t *testing.T) {
	outside := t.TempDir()
	require.NoError(t, os.Chmod(outside, 0o751))
	dir, err := MakeTmp(false, 0, 0)
	require.NoError(t, err)
	st, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "d", "e"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d", "e", "f"), nil, 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "d", "l")))
	require.NoError(t, os.Chmod(filepath.Join(dir, "d"), 0))
	n, err := RemoveTmp(dir)
	require.NoError(t, err)
	assert.Equal(t, 5, n, "the directory, d, e, f and the link")
	assert.NoDirExists(t, dir)
	st, err = os.Stat(outside)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o751), st.Mode().Perm(), "the link's target was not touched")
}
