package spill

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A missing directory is made, with its missing parents, 0700 and owned by
// shellsup's user; one that exists is checked, never changed.
func TestMakeDir(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "a", "b", "c")
	require.NoError(t, MakeDir(dir))
	for _, d := range []string{filepath.Join(base, "a"), filepath.Join(base, "a", "b"), dir} {
		st, err := os.Lstat(d)
		require.NoError(t, err)
		assert.True(t, st.IsDir(), d)
		assert.Equal(t, os.FileMode(0o700), st.Mode().Perm(), d)
	}
	require.NoError(t, MakeDir(dir), "an existing directory passes")

	open := filepath.Join(base, "open")
	require.NoError(t, os.Mkdir(open, 0o700))
	require.NoError(t, os.Chmod(open, 0o777))
	assert.ErrorContains(t, MakeDir(open), "is writable by group or others (mode 0777)")
	st, _ := os.Lstat(open)
	assert.Equal(t, os.FileMode(0o777), st.Mode().Perm(), "the checks stand: an existing directory is never chmodded")

	shared := filepath.Join(base, "shared")
	require.NoError(t, os.Mkdir(shared, 0o755))
	require.NoError(t, MakeDir(shared))
	st, _ = os.Lstat(shared)
	assert.Equal(t, os.FileMode(0o755), st.Mode().Perm(), "an existing 0755 directory is used as it is")

	link := filepath.Join(base, "link")
	require.NoError(t, os.Symlink(dir, link))
	assert.ErrorContains(t, MakeDir(link), "is a symbolic link")

	file := filepath.Join(base, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	assert.EqualError(t, MakeDir(filepath.Join(file, "x")), `spill directory "`+file+`/x" cannot be used: not a directory`)
	assert.ErrorContains(t, MakeDir("/proc/self/shellsup-spill"), `spill directory "/proc/self/shellsup-spill" does not exist and cannot be made: mkdir /proc/self/shellsup-spill: `)
}
