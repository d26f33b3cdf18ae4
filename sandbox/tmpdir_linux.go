package sandbox

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// tmpPrefix starts the name of every private TMPDIR.
const tmpPrefix = "shellsup-tmp-"

// MakeTmp makes the run's private TMPDIR, mode 0700, under os.TempDir(),
// named shellsup-tmp-TAG-RANDOM after shellsup's owner tag (its pid, start
// time, namespaces and boot: cgroup.Tag), owned by uid and gid when own
// is set (--user). It goes by descriptors from a parent checked first
// (checkTmpParent): nobody else may rename entries there, so the
// directory chowned is the one just made, never a link or a directory
// swapped in for it.
func MakeTmp(tag string, own bool, uid, gid int) (string, error) {
	parent := os.TempDir()
	pfd, err := unix.Open(parent, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("making the private TMPDIR in %q: %w", parent, err)
	}
	defer unix.Close(pfd)
	if err := checkTmpParent(pfd, parent); err != nil {
		return "", err
	}
	for range 100 {
		name := tmpPrefix + tag + "-" + strconv.FormatUint(uint64(rand.Uint32()), 10)
		err := unix.Mkdirat(pfd, name, 0o700)
		if err == unix.EEXIST {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("making the private TMPDIR in %q: %w", parent, err)
		}
		if err := settleTmp(pfd, name, own, uid, gid); err != nil {
			_ = unix.Unlinkat(pfd, name, unix.AT_REMOVEDIR) // empty and ours
			return "", fmt.Errorf("making the private TMPDIR %q: %w", filepath.Join(parent, name), err)
		}
		return filepath.Join(parent, name), nil
	}
	return "", fmt.Errorf("making the private TMPDIR in %q: 100 names taken", parent)
}

// checkTmpParent refuses a parent in which another user could rename the
// TMPDIR shellsup makes: one owned by neither root nor shellsup's user, or
// writable by group or others without the sticky bit (/tmp, root's and
// sticky, is fine).
func checkTmpParent(pfd int, parent string) error {
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return fmt.Errorf("making the private TMPDIR in %q: %w", parent, err)
	}
	switch {
	case st.Uid != 0 && int(st.Uid) != os.Geteuid():
		return fmt.Errorf("the private TMPDIR cannot be made in %q: it is owned by uid %d, neither root nor shellsup's user (uid %d); point TMPDIR at a directory of theirs", parent, st.Uid, os.Geteuid())
	case st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0:
		return fmt.Errorf("the private TMPDIR cannot be made in %q: it is writable by group or others without the sticky bit (mode %04o), so another user could swap what shellsup makes there", parent, st.Mode&0o7777)
	}
	return nil
}

// settleTmp opens the directory just made (never through a link), checks
// it is shellsup's own, sets its mode to 0700 whatever the umask, and
// gives it to uid and gid when own is set.
func settleTmp(pfd int, name string, own bool, uid, gid int) error {
	fd, err := unix.Openat(pfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("it is owned by uid %d, not shellsup's: something replaced it", st.Uid)
	}
	if err := unix.Fchmod(fd, 0o700); err != nil {
		return err
	}
	if own {
		if err := unix.Fchown(fd, uid, gid); err != nil {
			return fmt.Errorf("giving it to uid %d: %w", uid, err)
		}
	}
	return nil
}

// SweptTmp is one private TMPDIR a sweep removed.
type SweptTmp struct {
	Path    string
	Removed int // entries, the directory included
}

// SweepTmp removes, from os.TempDir(), the private TMPDIRs of shellsups
// killed before their cleanup: a directory (never a link) named by
// MakeTmp whose tag stale says is a gone shellsup's, owned by this
// process's uid (root: by any uid, as a --user run's is). Each is removed
// as RemoveTmp removes one. The error joins those that could not be.
func SweepTmp(stale func(tag string) bool) ([]SweptTmp, error) {
	dir := os.TempDir()
	names, err := tmpNames(dir)
	if err != nil {
		return nil, err
	}
	var out []SweptTmp
	var errs []error
	for _, name := range names {
		tag, ok := tmpTag(name)
		if !ok || !stale(tag) || !sweepable(filepath.Join(dir, name)) {
			continue
		}
		n, err := RemoveTmp(filepath.Join(dir, name))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, SweptTmp{Path: filepath.Join(dir, name), Removed: n})
	}
	return out, errors.Join(errs...)
}

// tmpNames lists the entries of dir named like a private TMPDIR.
func tmpNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	defer f.Close()
	all, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	return slices.DeleteFunc(all, func(n string) bool { return !strings.HasPrefix(n, tmpPrefix) }), nil
}

// tmpTag is the owner tag of a private TMPDIR's name: what lies between
// the prefix and MkdirTemp's random digits.
func tmpTag(name string) (string, bool) {
	rest := strings.TrimPrefix(name, tmpPrefix)
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 || i == len(rest)-1 || strings.Trim(rest[i+1:], "0123456789") != "" {
		return "", false
	}
	return rest[:i], true
}

// sweepable reports whether path is a directory, not a link, that this
// process may sweep: its own uid's, or any when it is root.
func sweepable(path string) bool {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return false
	}
	euid := os.Geteuid()
	return euid == 0 || int(st.Uid) == euid
}

// RemoveTmp removes the private TMPDIR and all in it, once the command's
// processes are gone, and returns how many entries it removed (the
// directory included). It never goes by a path the command could change:
// every step is relative to a descriptor of a directory already opened,
// each name is opened O_NOFOLLOW (a link is unlinked, never followed, even
// one swapped in for a directory during the walk by a process of the
// command's uid outside the run), and a directory the command made
// unwritable is made writable through its own descriptor. A tree deeper
// than maxTmpDepth is left, with an error.
func RemoveTmp(dir string) (int, error) {
	parent, err := unix.Open(filepath.Dir(dir), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("removing the private TMPDIR %q: %w", dir, err)
	}
	defer unix.Close(parent)
	var st unix.Stat_t
	if err := unix.Fstatat(parent, filepath.Base(dir), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if err == unix.ENOENT {
			return 0, nil
		}
		return 0, fmt.Errorf("removing the private TMPDIR %q: %w", dir, err)
	}
	var n int
	err = asOwner(int(st.Uid), int(st.Gid), func() error {
		var err error
		n, err = removeAt(parent, filepath.Base(dir), 0)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("removing the private TMPDIR %q: %w", dir, err)
	}
	return n, nil
}

// asOwner runs remove with the filesystem rights of uid and gid, the
// TMPDIR's owner, when shellsup is root and the owner is not: what a
// process of the owner's (a --user command, or anyone, for a directory a
// sweep finds) moved into the directory, and the owner could not have
// removed, root does not remove either. The fsuid and fsgid are a
// thread's own: the thread is locked for the walk and dropped by the
// runtime if they cannot be put back.
func asOwner(uid, gid int, remove func() error) error {
	if os.Geteuid() != 0 || uid == 0 {
		return remove()
	}
	runtime.LockOSThread()
	_, _ = unix.SetfsgidRetGid(gid) // the call reports the previous id, never an error
	_, _ = unix.SetfsuidRetUid(uid)
	err := remove()
	_, _ = unix.SetfsuidRetUid(0)
	_, _ = unix.SetfsgidRetGid(0)
	fsuid, _ := unix.SetfsuidRetUid(-1) // -1 changes nothing: the current id
	fsgid, _ := unix.SetfsgidRetGid(-1)
	if fsuid == 0 && fsgid == 0 {
		runtime.UnlockOSThread()
	}
	return err
}

// maxTmpDepth bounds the walk (each level holds one descriptor).
const maxTmpDepth = 256

// removeAt removes name in the directory dirfd: a file or a link by
// unlinkat, a directory by emptying it through a descriptor of its own.
func removeAt(dirfd int, name string, depth int) (int, error) {
	err := unix.Unlinkat(dirfd, name, 0)
	if err == nil || err == unix.ENOENT {
		return 1, nil
	}
	if err != unix.EISDIR && err != unix.EPERM {
		return 0, err
	}
	if depth >= maxTmpDepth {
		return 0, fmt.Errorf("more than %d directories deep", maxTmpDepth)
	}
	fd, err := openDirAt(dirfd, name)
	if err != nil {
		return 0, err
	}
	n, err := emptyDir(fd, depth)
	unix.Close(fd)
	if err != nil {
		return n, err
	}
	if err := unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
		return n, err
	}
	return n + 1, nil
}

// openDirAt opens the directory name in dirfd for reading, never through a
// link, after making it searchable and writable by its owner (it may be
// mode 0: it is opened O_PATH first, changed and reopened through
// /proc/self/fd, which names that very inode).
func openDirAt(dirfd int, name string) (int, error) {
	p, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(p)
	self := "/proc/self/fd/" + strconv.Itoa(p)
	_ = os.Chmod(self, 0o700) // the open below reports what it changes
	return unix.Open(self, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// emptyDir removes every entry of the directory fd. Entries are read
// whole before any is removed (removing while reading can skip some), and
// again until a pass finds none, at most tmpPasses times.
func emptyDir(fd int, depth int) (int, error) {
	n := 0
	for pass := 0; pass < tmpPasses; pass++ {
		names, err := readNames(fd)
		if err != nil || len(names) == 0 {
			return n, err
		}
		for _, name := range names {
			m, err := removeAt(fd, name, depth+1)
			n += m
			if err != nil {
				return n, err
			}
		}
	}
	return n, nil // what is left makes the directory's removal fail
}

// tmpPasses bounds emptyDir against a process that keeps adding entries.
const tmpPasses = 8

// readNames lists the directory fd from its start.
func readNames(fd int) ([]string, error) {
	dup, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "tmpdir")
	defer f.Close()
	return f.Readdirnames(-1)
}
