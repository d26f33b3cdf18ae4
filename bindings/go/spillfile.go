package shellsup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/shellsup/shellsup/internal/linux"

	"golang.org/x/sys/unix"
)

// openSpill opens the spill files of the run directory dir for reading,
// and only if they are what shellsup made (see openPrivate): a directory
// and files of this process's user, open to no one else, no symbolic link
// at either step (the files are opened relative to the directory opened).
func openSpill(dir string) ([2]*os.File, error) {
	var files [2]*os.File
	if dir == "" {
		return files, errors.New("shellsup named no spill directory in its start frame (a shellsup without --spill?)")
	}
	d, err := openPrivate(unix.AT_FDCWD, dir, unix.O_DIRECTORY, syscall.S_IFDIR)
	if err != nil {
		return files, fmt.Errorf("opening the job's spill directory: %w", err)
	}
	defer d.Close() // read-only
	for i, name := range [2]string{Stdout, Stderr} {
		f, err := openPrivate(int(d.Fd()), name, 0, syscall.S_IFREG)
		if err != nil {
			for _, g := range files[:i] {
				_ = g.Close() // read-only, never read: nothing to lose
			}
			return [2]*os.File{}, fmt.Errorf("opening the job's spill file %q: %w", filepath.Join(dir, name), err)
		}
		files[i] = f
	}
	return files, nil
}

// openPrivate opens path (relative to dirfd) read-only without following a
// final symbolic link, and checks that it is of type kind, owned by this process's
// effective user, and open to neither group nor others (shellsup makes the
// directory 0700 and the files 0600).
func openPrivate(dirfd int, path string, flags int, kind uint32) (*os.File, error) {
	fd, err := linux.Openat(dirfd, path, unix.O_RDONLY|unix.O_NOFOLLOW|flags, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close() // read-only
		return nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		err = fmt.Errorf("%s: no owner to check", path)
	case uint32(st.Mode)&syscall.S_IFMT != kind:
		err = fmt.Errorf("%s is not what shellsup made (file type %o)", path, uint32(st.Mode)&syscall.S_IFMT)
	case int(st.Uid) != os.Geteuid():
		err = fmt.Errorf("%s is owned by uid %d, not this process's (%d)", path, st.Uid, os.Geteuid())
	case st.Mode&0o077 != 0:
		err = fmt.Errorf("%s is open to group or others (mode %04o); shellsup makes it private", path, st.Mode&0o7777)
	}
	if err != nil {
		_ = f.Close() // read-only
		return nil, err
	}
	return f, nil
}
