package spill

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreateWritesPrivateFilesUpToTheLimit(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o700))
	require.NoError(t, CheckDir(dir))
	s, err := Create(dir, "run-1", 10)
	require.NoError(t, err)
	s.Files[0].Write([]byte("hello "))
	s.Files[0].Write([]byte("world, and more"))
	s.Files[1].Write([]byte("\xff\xfe raw"))
	require.NoError(t, s.Close())

	out, err := os.ReadFile(filepath.Join(dir, "run-1", "stdout"))
	require.NoError(t, err)
	assert.Equal(t, "hello worl", string(out))
	assert.Equal(t, Stats{Path: filepath.Join(dir, "run-1", "stdout"), Written: 10, Dropped: 11, Cut: true}, s.Files[0].Stats())
	errOut, _ := os.ReadFile(filepath.Join(dir, "run-1", "stderr"))
	assert.True(t, bytes.Equal([]byte("\xff\xfe raw"), errOut), "raw bytes kept as they are")

	for path, mode := range map[string]os.FileMode{
		filepath.Join(dir, "run-1"):           0o700 | os.ModeDir,
		filepath.Join(dir, "run-1", "stdout"): 0o600,
		filepath.Join(dir, "run-1", "stderr"): 0o600,
	} {
		st, err := os.Lstat(path)
		require.NoError(t, err)
		assert.Equal(t, mode, st.Mode(), path)
	}
	_, err = Create(dir, "run-1", 10)
	assert.ErrorContains(t, err, "file exists", "an existing spill directory is never reused")
}

func TestCheckDirRefusals(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	open := filepath.Join(base, "open")
	require.NoError(t, os.Mkdir(open, 0o777))
	require.NoError(t, os.Chmod(open, 0o777))
	link := filepath.Join(base, "link")
	require.NoError(t, os.Symlink(base, link))
	rows := map[string]string{
		filepath.Join(base, "missing"): "does not exist",
		file:                           "is not a directory",
		open:                           "writable by group or others (mode 0777)",
		link:                           "is a symbolic link",
	}
	if os.Geteuid() == 0 {
		theirs := filepath.Join(base, "theirs")
		require.NoError(t, os.Mkdir(theirs, 0o755))
		require.NoError(t, os.Chown(theirs, 65534, 65534))
		rows[theirs] = "owned by uid 65534, not shellsup's (uid 0)"
	}
	for dir, want := range rows {
		err := CheckDir(dir)
		require.Error(t, err, dir)
		assert.Contains(t, err.Error(), want)
		assert.Contains(t, err.Error(), `"`+dir+`"`)
	}
}

func TestCreateNeverFollowsAPlantedSymlink(t *testing.T) {
	dir := t.TempDir()
	target := t.TempDir()
	require.NoError(t, os.Symlink(target, filepath.Join(dir, "run-2")))
	_, err := Create(dir, "run-2", 10)
	require.Error(t, err)
	entries, _ := os.ReadDir(target)
	assert.Empty(t, entries, "nothing written through the link")
}
