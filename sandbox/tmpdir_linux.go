package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// MakeTmp makes the run's private TMPDIR, mode 0700, under os.TempDir(),
// named shellsup-tmp-PID-RANDOM after shellsup's pid, owned by uid and gid
// when own is set (--user).
func MakeTmp(own bool, uid, gid int) (string, error) {
	dir, err := os.MkdirTemp("", "shellsup-tmp-"+strconv.Itoa(os.Getpid())+"-")
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
// processes are gone (the caller's word: with one alive, paths could
// change under the walk), and returns how many entries it removed (the
// directory included). Directories the command made unwritable are made
// writable first; links are removed, never followed.
func RemoveTmp(dir string) (int, error) {
	n := 0
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		n++
		if err == nil && d.IsDir() {
			_ = chmodDir(path) // RemoveAll reports what stays
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil {
		return 0, fmt.Errorf("removing the private TMPDIR %q: %w", dir, err)
	}
	return n, nil
}

// chmodDir makes the directory path (never what a link there names)
// searchable and writable by its owner. The directory may be closed to
// its owner (mode 0), so it is opened O_PATH, and changed through
// /proc/self/fd: fchmod refuses an O_PATH descriptor.
func chmodDir(path string) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return os.Chmod("/proc/self/fd/"+strconv.Itoa(fd), 0o700)
}
