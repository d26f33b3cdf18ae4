package cgroup

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/shellsup/shellsup/internal/linux"

	"golang.org/x/sys/unix"
)

// errDeadline says a removal ran out of time with cgroups left.
var errDeadline = errors.New("the deadline passed with sub-cgroups left; the next sweep removes the rest")

// removeLeaf removes dir and any cgroups the command made below it,
// deepest first, within wait.
func removeLeaf(dir string, wait time.Duration) error {
	return removeBy(dir, time.Now().Add(wait))
}

// removeBy removes dir and the cgroups below it by the deadline. An empty
// leaf, the usual case, is one rmdir and needs no fd. Otherwise the tree
// below is removed deepest first (see clearBelow), and dir last, retrying
// on EBUSY while the kernel releases the last exited tasks.
func removeBy(dir string, deadline time.Time) error {
	err := unix.Rmdir(dir)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EBUSY) { // a v2 cgroup with children is EBUSY too
		return fmt.Errorf("removing cgroup %s: %w", dir, err)
	}
	if err := clearBelow(dir, deadline); err != nil {
		return fmt.Errorf("removing the cgroups below %s: %w", dir, err)
	}
	return rmdirAt(unix.AT_FDCWD, dir, deadline)
}

// rmdirAt removes name (relative to dirfd), retrying on EBUSY until the
// deadline: a cgroup whose last tasks have exited but are not yet released
// is busy for a moment, and the kernel gives no event for "removable".
func rmdirAt(dirfd int, name string, deadline time.Time) error {
	for {
		err := unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("removing cgroup %s: %w", name, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// clearBelow removes every cgroup below dir, deepest first, until the
// deadline (errDeadline). It walks down and back up ("..") holding at most
// two fds and naming each cgroup relative to its parent, so that a tree of
// any depth (past PATH_MAX) or width is removed with the same small means.
func clearBelow(dir string, deadline time.Time) error {
	cur, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	var path []string // the names from dir down to cur
	for {
		if time.Now().After(deadline) {
			unix.Close(cur)
			return errDeadline
		}
		sub, err := firstSubdir(cur)
		if err != nil {
			unix.Close(cur)
			return err
		}
		next, name := -1, ""
		if sub != "" {
			next, err = unix.Openat(cur, sub, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		} else if len(path) > 0 {
			name = path[len(path)-1]
			next, err = unix.Openat(cur, "..", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		}
		unix.Close(cur) // read-only directory fds
		if err != nil {
			return fmt.Errorf("walking the cgroups below %s: %w", dir, err)
		}
		if next < 0 {
			return nil // back at dir, nothing below it
		}
		cur = next
		if sub != "" {
			path = append(path, sub)
			continue
		}
		path = path[:len(path)-1]
		if err := rmdirAt(cur, name, deadline); err != nil {
			unix.Close(cur)
			return err
		}
	}
}

// firstSubdir is the name of a directory in the directory open on fd, ""
// when it has none. It reads from the start each time: the cgroups removed
// since are no longer listed.
func firstSubdir(fd int) (string, error) {
	if _, err := unix.Seek(fd, 0, 0); err != nil {
		return "", fmt.Errorf("rewinding a cgroup directory: %w", err)
	}
	var buf [8192]byte
	for {
		n, err := linux.Getdents(fd, buf[:])
		if err != nil {
			return "", fmt.Errorf("listing a cgroup directory: %w", err)
		}
		if n <= 0 {
			return "", nil
		}
		if name := dirIn(buf[:n]); name != "" {
			return name, nil
		}
	}
}

// dirIn is the first directory other than . and .. among the
// linux_dirent64 records in b.
func dirIn(b []byte) string {
	const nameOff = int(unsafe.Offsetof(unix.Dirent{}.Name))
	for len(b) >= nameOff {
		d := (*unix.Dirent)(unsafe.Pointer(&b[0]))
		reclen := int(d.Reclen)
		if reclen < nameOff || reclen > len(b) {
			return ""
		}
		name := b[nameOff:reclen]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		if d.Type == unix.DT_DIR && string(name) != "." && string(name) != ".." {
			return string(name)
		}
		b = b[reclen:]
	}
	return ""
}
