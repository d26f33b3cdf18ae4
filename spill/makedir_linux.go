package spill

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// MakeDir is CheckDir for the directory the user named, made first when it
// does not exist: dir and each missing parent are created with mode 0700,
// owned by shellsup's user (`--spill ~/.cache/shellsup` works on a fresh
// home). A directory that exists is only checked: its owner and mode are
// never changed.
func MakeDir(dir string) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); errors.Is(err, unix.ENOENT) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("spill directory %q does not exist and cannot be made: %v", dir, unwrapPath(err))
		}
	}
	return CheckDir(dir)
}

// unwrapPath is the errno of a *PathError (whose path may be a parent of
// the directory named, which the message quotes already).
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %s: %w", pe.Op, pe.Path, pe.Err)
	}
	return err
}
