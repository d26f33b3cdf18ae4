//go:build linux

package shellsup

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spillDir makes a run directory as shellsup does (0700, files 0600) and
// lets each row spoil it.
func spillDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	require.NoError(t, os.Mkdir(dir, 0o700))
	for _, name := range []string{Stdout, Stderr} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(name), 0o600))
	}
	return dir
}

// TestOpenSpillChecksWhatItOpens: the binding reads a job's spill files
// only if they are what shellsup made: a directory and files of this user,
// private, no symbolic link at either step. Before, it opened the path
// named with O_NOFOLLOW only, and read whatever was there.
func TestOpenSpillChecksWhatItOpens(t *testing.T) {
	files, err := openSpill(spillDir(t))
	require.NoError(t, err, "as shellsup makes it")
	for _, f := range files {
		f.Close()
	}
	rows := []struct {
		name  string
		spoil func(t *testing.T, dir string)
		want  string
	}{
		{"a file open to others", func(t *testing.T, dir string) {
			require.NoError(t, os.Chmod(filepath.Join(dir, Stderr), 0o644))
		}, "open to group or others"},
		{"a directory open to others", func(t *testing.T, dir string) {
			require.NoError(t, os.Chmod(dir, 0o755))
		}, "open to group or others"},
		{"a file that is a link", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, Stdout)))
			require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(dir, Stdout)))
		}, "too many levels of symbolic links"},
		{"a directory that is a link", func(t *testing.T, dir string) {
			real := dir + ".real"
			require.NoError(t, os.Rename(dir, real))
			require.NoError(t, os.Symlink(real, dir))
		}, "not a directory"},
		{"a file that is a directory", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, Stdout)))
			require.NoError(t, os.Mkdir(filepath.Join(dir, Stdout), 0o700))
		}, "not what shellsup made"},
		{"a file of another user", func(t *testing.T, dir string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a file away")
			}
			require.NoError(t, os.Chown(filepath.Join(dir, Stderr), 65534, 65534))
		}, "owned by uid 65534"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			dir := spillDir(t)
			row.spoil(t, dir)
			_, err := openSpill(dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), row.want)
		})
	}
}
