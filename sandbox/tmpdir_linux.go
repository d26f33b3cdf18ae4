package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// MakeTmp makes the run's private TMPDIR, mode 0700, under os.TempDir(),
// owned by uid and gid when own is set (--user).
func MakeTmp(own bool, uid, gid int) (string, error) {
	dir, err := os.MkdirTemp("", "shellsup-tmp-")
	if err != nil {
		return "", fmt.Errorf("making the private TMPDIR: %w", err)
	}
	if own {
		if err := os.Chown(dir, uid, gid); err != nil {
			_ = os.Remove(dir) // empty and ours
			return "", fmt.Errorf("giving the private TMPDIR %q to uid %d: %w", dir, uid, err)
		}
	}
	return dir, nil
}

// RemoveTmp removes the private TMPDIR and all in it, once the command's
// processes are gone, and returns how many entries it removed (the
// directory included). Directories the command made unwritable are made
// writable first; links are removed, never followed.
func RemoveTmp(dir string) (int, error) {
	n := 0
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		n++
		if err == nil && d.IsDir() {
			_ = os.Chmod(path, 0o700) // RemoveAll reports what stays
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil {
		return 0, fmt.Errorf("removing the private TMPDIR %q: %w", dir, err)
	}
	return n, nil
}
