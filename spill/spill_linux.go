package spill

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/shellsup/shellsup/internal/linux"

	"golang.org/x/sys/unix"
)

// CheckDir checks that dir can hold spill directories: an existing
// directory, not a symbolic link, owned by shellsup's user and writable by
// nobody else (as ssh checks ~/.ssh: another user who owns the directory
// could replace or read what shellsup puts in it).
// The error quotes dir and says what is wrong.
func CheckDir(dir string) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("spill directory %q does not exist", dir)
		}
		return fmt.Errorf("spill directory %q cannot be used: %v", dir, err)
	}
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return fmt.Errorf("spill directory %q is a symbolic link; name the directory itself", dir)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("spill directory %q is not a directory", dir)
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("spill directory %q is owned by uid %d, not shellsup's (uid %d); use a directory of shellsup's own user", dir, st.Uid, os.Geteuid())
	case st.Mode&0o022 != 0:
		return fmt.Errorf("spill directory %q is writable by group or others (mode %04o); use a directory only its owner can write", dir, st.Mode&0o7777)
	}
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return fmt.Errorf("spill directory %q is not writable: %v", dir, err)
	}
	return nil
}

// Set is the spill of one run: a directory holding one file per stream.
type Set struct {
	Dir   string
	Files [2]*File // stdout, stderr
}

// Create makes dir/name (mode 0700, which must not exist) and in it the
// files "stdout" and "stderr" (mode 0600), each limited to max bytes.
func Create(dir, name string, max int64) (*Set, error) {
	parent, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_PATH, 0)
	if err != nil {
		return nil, fmt.Errorf("open spill directory %q: %w", dir, err)
	}
	defer unix.Close(parent) // O_PATH: nothing to flush
	if err := unix.Mkdirat(parent, name, 0o700); err != nil {
		return nil, fmt.Errorf("create spill directory %q in %q: %w", name, dir, err)
	}
	sub, err := unix.Openat(parent, name, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_PATH, 0)
	if err != nil {
		_ = unix.Unlinkat(parent, name, unix.AT_REMOVEDIR) // empty: made just above
		return nil, fmt.Errorf("open spill directory %q: %w", filepath.Join(dir, name), err)
	}
	defer unix.Close(sub)
	s := &Set{Dir: filepath.Join(dir, name)}
	for i, stream := range []string{"stdout", "stderr"} {
		fd, err := unix.Openat(sub, stream, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			s.Close()
			s.remove(parent, sub, name) // nothing of the run is in it yet
			return nil, fmt.Errorf("create spill file %q: %w", filepath.Join(s.Dir, stream), err)
		}
		s.Files[i] = &File{Path: filepath.Join(s.Dir, stream), fd: fd, max: max}
	}
	return s, nil
}

// remove deletes the files made so far and the directory, after a failed
// Create; errors are ignored: the directory is the run's own and empty of
// output.
func (s *Set) remove(parent, sub int, name string) {
	for _, f := range s.Files {
		if f != nil {
			_ = unix.Unlinkat(sub, filepath.Base(f.Path), 0)
		}
	}
	_ = unix.Unlinkat(parent, name, unix.AT_REMOVEDIR)
}

// Close closes both files and returns the first error (a failed close of a
// written file can mean lost data).
func (s *Set) Close() error {
	var first error
	for _, f := range s.Files {
		if f != nil {
			if err := f.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// File is one stream's spill. Its methods are for one goroutine, the
// stream's reader.
type File struct {
	Path    string
	fd      int
	max     int64
	written int64 // bytes in the file
	dropped int64 // bytes past max, or lost to a write error
	err     error // the first write error; the file stops growing after it
}

// Write appends as much of p as the limit allows and counts the rest.
func (f *File) Write(p []byte) {
	n := min(int64(len(p)), f.room())
	for n > 0 {
		w, err := linux.Write(f.fd, p[:n])
		if err != nil {
			f.err = fmt.Errorf("writing the spill file %s: %w", f.Path, err)
			break
		}
		f.written += int64(w)
		p, n = p[w:], n-int64(w)
	}
	f.dropped += int64(len(p))
}

// Fd is the file's descriptor, for a caller that splices into it; it must
// call Spliced with what it moved, and never move more than Room.
func (f *File) Fd() int { return f.fd }

// Room is how many bytes the file may still take.
func (f *File) Room() int64 { return f.room() }

// Spliced counts n bytes moved into the file by the caller.
func (f *File) Spliced(n int64) { f.written += n }

// Dropped counts n bytes that did not go into the file.
func (f *File) Dropped(n int64) { f.dropped += n }

func (f *File) room() int64 {
	if f.err != nil {
		return 0
	}
	return max(f.max-f.written, 0)
}

// Stats is what a File holds at one moment.
type Stats struct {
	Path    string
	Written int64 // bytes in the file
	Dropped int64 // bytes past the limit or after a write error
	Cut     bool  // Dropped > 0
	Err     string
}

// Stats reports the file's counts.
func (f *File) Stats() Stats {
	st := Stats{Path: f.Path, Written: f.written, Dropped: f.dropped, Cut: f.dropped > 0}
	if f.err != nil {
		st.Err = f.err.Error()
	}
	return st
}

// Close closes the file; a second Close does nothing.
func (f *File) Close() error {
	if f.fd < 0 {
		return nil
	}
	err := unix.Close(f.fd)
	f.fd = -1
	if err != nil {
		return os.NewSyscallError("close "+f.Path, err)
	}
	return nil
}
