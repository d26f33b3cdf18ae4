package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/procstat"
)

// owner is the shellsup a leaf's name records: its pid and start time as
// its own PID namespace sees them, the inode of that namespace
// (/proc/self/ns/pid), the inode of its own time namespace
// (/proc/self/ns/time: the kernel shows a start time shifted by the
// reader's boottime offset, so a start time compares only with one read
// in the same time namespace; 0 on a kernel without time namespaces) and
// the boot (/proc/sys/kernel/random/boot_id, without dashes). A pid and a
// start time mean something only in the namespaces and the boot they
// were read in.
type owner struct {
	pid    int
	start  uint64
	ns     uint64
	timens uint64
	boot   string
}

// name is the leaf's directory name.
func (o owner) name() string {
	return fmt.Sprintf("shellsup-%d-%d-%d-%d-%s", o.pid, o.start, o.ns, o.timens, o.boot)
}

// parseOwner reads a leaf name, shellsup-<pid>-<starttime>-<pidns
// inode>-<timens inode>-<boot id> (four decimal numbers and 32 lowercase
// hex digits); ok is false for anything shellsup did not name. Leaves of
// older shellsups, shellsup-<pid>-<start> and
// shellsup-<pid>-<start>-<pidns>-<boot>, are not parsed either: they do not
// say which namespaces their pid and start time belong to. It is parsed by
// hand: a regular expression compiled at package init cost every start 60 µs.
func parseOwner(name string) (o owner, ok bool) {
	rest, found := strings.CutPrefix(name, "shellsup-")
	f := strings.Split(rest, "-")
	if !found || len(f) != 5 || !digits(f[0]) || !digits(f[1]) || !digits(f[2]) || !digits(f[3]) || !lowerHex32(f[4]) {
		return owner{}, false
	}
	var err1, err2, err3, err4 error
	o.pid, err1 = strconv.Atoi(f[0])
	o.start, err2 = strconv.ParseUint(f[1], 10, 64)
	o.ns, err3 = strconv.ParseUint(f[2], 10, 64)
	o.timens, err4 = strconv.ParseUint(f[3], 10, 64)
	o.boot = f[4]
	return o, err1 == nil && err2 == nil && err3 == nil && err4 == nil
}

// digits reports whether s is one or more ASCII decimal digits.
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// lowerHex32 reports whether s is 32 lowercase hex digits (a boot id
// without its dashes).
func lowerHex32(s string) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && (s[i] < 'a' || s[i] > 'f') {
			return false
		}
	}
	return len(s) == 32
}

// self is this process as a leaf's owner. Whether proc shows this
// process's own PID namespace (so that the pids of leaves made in it can be
// judged there) is procShowsSelf's to say, which only a sweep asks.
func self(proc string) (o owner, err error) {
	o.pid = os.Getpid()
	me, err := procstat.ReadSelf(proc)
	if err != nil {
		return o, fmt.Errorf("reading shellsup's own start time: %w", err)
	}
	o.start = me.Start
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(proc, "self", "ns", "pid"), &st); err != nil {
		return o, fmt.Errorf("reading shellsup's PID namespace: %w", err)
	}
	o.ns = st.Ino
	if o.timens, err = nsInode(filepath.Join(proc, "self", "ns", "time")); err != nil {
		return o, fmt.Errorf("reading shellsup's time namespace: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(proc, "sys", "kernel", "random", "boot_id"))
	if err != nil {
		return o, fmt.Errorf("reading the boot id: %w", err)
	}
	o.boot = strings.ReplaceAll(strings.TrimSpace(string(b)), "-", "")
	if len(o.boot) != 32 {
		return o, fmt.Errorf("malformed boot id %q", b)
	}
	return o, nil
}

// Tag is this process's owner record as its leaves' names carry it,
// <pid>-<start>-<pidns>-<timens>-<boot>, for what else a shellsup killed
// before its cleanup leaves behind (the sandbox's private TMPDIR), so that
// a sweep judges it as it judges a leaf.
func Tag(proc string) (string, error) {
	o, err := self(proc)
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(o.name(), "shellsup-"), nil
}

// StaleTags returns the judge a sweep applies to a Tag: true only for one
// made in this process's PID namespace, time namespace and boot, seen
// through proc, whose shellsup is gone.
func StaleTags(proc string) (func(tag string) bool, error) {
	me, err := self(proc)
	if err != nil {
		return nil, err
	}
	j := judge{proc: proc, me: me, seesOwn: procShowsSelf(proc, me.pid)}
	return func(tag string) bool { return j.verdict("shellsup-"+tag) == dead }, nil
}

// nsInode is the inode of the namespace link path, 0 where the kernel has
// no such namespace (a time namespace needs Linux 5.6 and CONFIG_TIME_NS).
func nsInode(path string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return 0, nil
		}
		return 0, err
	}
	return st.Ino, nil
}

// procShowsSelf says whether proc is the procfs of this process's own PID
// namespace: /proc/self is this process's pid, and its NSpid line has one
// entry (a procfs of an ancestor namespace lists one more pid per level).
func procShowsSelf(proc string, pid int) bool {
	link, err := os.Readlink(filepath.Join(proc, "self"))
	if err != nil || link != strconv.Itoa(pid) {
		return false
	}
	b, err := os.ReadFile(filepath.Join(proc, "self", "status"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
			return len(strings.Fields(v)) == 1
		}
	}
	return true // a kernel before 4.1 has no NSpid: no nested namespaces to tell apart
}

// procShowsAll reports whether proc shows other users' processes: not a
// procfs mounted hidepid=2 (or "invisible"), where a process the sweeper
// may not see reads as gone, so a live run of another user's (root's,
// with --user) would be judged stale. Pid 1 of the namespace proc shows
// is always there, and it is seen unless it is hidden.
func procShowsAll(proc string) bool {
	_, err := os.Stat(filepath.Join(proc, "1"))
	return err == nil
}

// verdict is a sweep's judgement of one leaf.
type verdict int

const (
	notLeaf verdict = iota // not named by this shellsup version: never touched
	live                   // its shellsup is alive
	foreign                // made in another PID or time namespace or boot: its owner cannot be judged
	dead                   // stale: its shellsup is gone
)

// verdict says whether the leaf called name is stale, as j.me sees it
// through j.proc. Only a leaf of my own PID namespace, time namespace and
// boot is judged, and only when j.proc shows that PID namespace (seesOwn):
// a start time read in another time namespace is shifted by the
// difference of the boottime offsets, so it would never match.
func (j judge) verdict(name string) verdict {
	o, ok := parseOwner(name)
	switch {
	case !ok:
		return notLeaf
	case o.ns != j.me.ns || o.timens != j.me.timens || o.boot != j.me.boot || !j.seesOwn:
		return foreign
	}
	start, err := startTime(j.proc, o.pid)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && procShowsAll(j.proc) {
			return dead
		}
		return live // unreadable for another reason: leave it
	}
	if start != o.start {
		return dead // the pid was reused
	}
	return live
}
