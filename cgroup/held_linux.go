package cgroup

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// held is a leaf as descriptors opened when it was made: its directory,
// locked, and its process list. They let the cleanup read the list with no
// new fd (a command may lower shellsup's RLIMIT_NOFILE) and under any name
// (a v1 cgroup can be renamed within its parent by whoever may write the
// parent), and the lock tells a sweep that a live shellsup owns the leaf
// whatever its name now says.
type held struct {
	fd    int      // O_DIRECTORY, flock(LOCK_EX) held until closed, when open
	procs *os.File // cgroup.procs
	open  bool     // fd is open (the zero held holds nothing)
}

// hold opens dir and its process list and takes the directory's lock. A
// new leaf is nobody else's: a lock already taken is an error.
func hold(dir string) (held, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return held{}, fmt.Errorf("open %s: %w", dir, err)
	}
	h := held{fd: fd, open: true}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		h.close()
		return held{}, fmt.Errorf("locking %s: %w", dir, err)
	}
	if h.procs, err = os.Open(filepath.Join(dir, "cgroup.procs")); err != nil {
		h.close()
		return held{}, err
	}
	return h, nil
}

// list reads the process list: opened afresh through the directory's fd,
// which follows a rename, and which v1 needs (a v1 list re-read through a
// descriptor kept open is answered from a copy up to a second old, which a
// process that moved out can keep alive). When no fd can be had (EMFILE: a
// command lowered shellsup's RLIMIT_NOFILE) it reads the descriptor opened
// with the leaf instead, and says in stale why the answer may be old.
func (h held) list() (in map[int]bool, stale string, err error) {
	if !h.open {
		return nil, "", errors.New("not open")
	}
	f := h.procs
	fd, err := unix.Openat(h.fd, "cgroup.procs", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	switch {
	case err == nil:
		f = os.NewFile(uintptr(fd), "cgroup.procs")
		defer f.Close() // read-only
	case errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE):
		stale = "read through the descriptor kept since setup (" + errnoName(err) + " for a new one), which cgroup v1 may answer from a list up to 1 s old"
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, "", err
		}
	default:
		return nil, "", err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, "", err
	}
	in = map[int]bool{}
	for _, w := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(w); err == nil {
			in[p] = true
		}
	}
	return in, stale, nil
}

// path is where the leaf is now: dir, or, when dir no longer names it (a v1
// rename), the entry of dir's parent with the leaf's inode; "" when it is
// in neither (removed).
func (h held) path(dir string) string {
	var st, at unix.Stat_t
	if !h.open || unix.Fstat(h.fd, &st) != nil {
		return dir
	}
	if unix.Stat(dir, &at) == nil && at.Dev == st.Dev && at.Ino == st.Ino {
		return dir
	}
	entries, err := os.ReadDir(filepath.Dir(dir))
	if err != nil {
		return ""
	}
	for _, e := range entries {
		p := filepath.Join(filepath.Dir(dir), e.Name())
		if e.IsDir() && unix.Lstat(p, &at) == nil && at.Dev == st.Dev && at.Ino == st.Ino {
			return p
		}
	}
	return ""
}

func (h *held) close() {
	if h.procs != nil {
		h.procs.Close() // read-only
		h.procs = nil
	}
	if h.open {
		unix.Close(h.fd) // releases the lock
		h.open = false
	}
}

// lockedByLive says whether a live shellsup holds the leaf at dir. A
// shellsup takes an exclusive lock; a process of the command can take the
// free lock once its shellsup is dead, to keep its leaf from the sweep, and
// /proc/locks names only the pid that took a lock, which may be gone and
// its pid reused (by the sweeping process itself, even). So the lock is a
// live shellsup's only when it is exclusive and the process /proc/locks
// names still holds it through its own descriptor (its fdinfo lists the
// lock), is not this process, and is not in the leaf. On false, unlock
// releases what the caller holds (the sweep keeps the lock, when it got it,
// while it kills and removes the leaf); a leaf that cannot be opened is
// judged by its name alone, as before locks.
func lockedByLive(proc, dir string) (live bool, unlock func()) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false, func() {}
	}
	unlock = func() { unix.Close(fd) }
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
		return false, unlock
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return true, unlock // cannot tell: leave it
	}
	id := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	pid, ok := exclusiveTaker(proc, id)
	if !ok || pid == os.Getpid() || memberOf(proc, pid, filepath.Base(dir)) {
		return false, unlock
	}
	held, readable := holdsLock(proc, pid, id)
	// A live shellsup of another uid, or of this one (it is non-dumpable),
	// does not show its fdinfo to an unprivileged sweeper: that process is
	// taken at its word (what is left open: docs/cleanup.md).
	return held || !readable, unlock
}

// exclusiveTaker is the pid /proc/locks gives for the one exclusive flock
// on the inode id ("maj:min:ino"); false when a lock on it is shared (a
// shellsup's never is) or none is shown (0: of another PID namespace).
func exclusiveTaker(proc, id string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(proc, "locks"))
	if err != nil {
		return 0, false
	}
	pid := 0
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line) // "1: FLOCK ADVISORY WRITE 20816 00:26:873664 0 EOF"; "1: -> FLOCK …" waits
		if len(f) < 6 || f[1] != "FLOCK" || f[5] != id {
			continue
		}
		p, err := strconv.Atoi(f[4])
		if f[3] != "WRITE" || err != nil || p <= 0 || pid != 0 {
			return 0, false
		}
		pid = p
	}
	return pid, pid != 0
}

// holdsLock says whether pid holds a flock on the inode id through one of
// its own descriptors: the fdinfo of a descriptor lists the locks of its
// open file description. A task id resolves to its process in /proc.
// readable is false when pid's fdinfo is refused to this process.
func holdsLock(proc string, pid int, id string) (held, readable bool) {
	dir := filepath.Join(proc, strconv.Itoa(pid), "fdinfo")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.EPERM) // gone: readable, holding nothing
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "lock:") && strings.Contains(line, " FLOCK ") && strings.Contains(line, " "+id+" ") {
				return true, true
			}
		}
	}
	return false, true
}
