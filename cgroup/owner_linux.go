package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/procstat"
)

// owner is the shellsup a leaf's name records: its pid and start time as
// its own PID namespace sees them, the inode of that namespace
// (/proc/self/ns/pid) and the boot (/proc/sys/kernel/random/boot_id,
// without dashes). A pid and a start time mean something only in the
// namespace and the boot they were read in.
type owner struct {
	pid   int
	start uint64
	ns    uint64
	boot  string
}

// leafPattern matches the leaves shellsup makes:
// shellsup-<pid>-<starttime>-<pidns inode>-<boot id>.
var leafPattern = regexp.MustCompile(`^shellsup-([0-9]+)-([0-9]+)-([0-9]+)-([0-9a-f]{32})$`)

// name is the leaf's directory name.
func (o owner) name() string {
	return fmt.Sprintf("shellsup-%d-%d-%d-%s", o.pid, o.start, o.ns, o.boot)
}

// parseOwner reads a leaf name; ok is false for anything shellsup did not
// name (a leaf of an older shellsup, shellsup-<pid>-<start>, included:
// it does not say which namespace its pid belongs to).
func parseOwner(name string) (o owner, ok bool) {
	m := leafPattern.FindStringSubmatch(name)
	if m == nil {
		return owner{}, false
	}
	var err1, err2, err3 error
	o.pid, err1 = strconv.Atoi(m[1])
	o.start, err2 = strconv.ParseUint(m[2], 10, 64)
	o.ns, err3 = strconv.ParseUint(m[3], 10, 64)
	o.boot = m[4]
	return o, err1 == nil && err2 == nil && err3 == nil
}

// self is this process as a leaf's owner. seesOwn says whether proc shows
// this process's own PID namespace (so that the pids of leaves made in it
// can be judged there): /proc/self is this process's pid, and its NSpid
// line has one entry (a procfs of an ancestor namespace lists one more
// pid per level).
func self(proc string) (o owner, seesOwn bool, err error) {
	o.pid = os.Getpid()
	me, err := procstat.ReadSelf(proc)
	if err != nil {
		return o, false, fmt.Errorf("reading shellsup's own start time: %w", err)
	}
	o.start = me.Start
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(proc, "self", "ns", "pid"), &st); err != nil {
		return o, false, fmt.Errorf("reading shellsup's PID namespace: %w", err)
	}
	o.ns = st.Ino
	b, err := os.ReadFile(filepath.Join(proc, "sys", "kernel", "random", "boot_id"))
	if err != nil {
		return o, false, fmt.Errorf("reading the boot id: %w", err)
	}
	o.boot = strings.ReplaceAll(strings.TrimSpace(string(b)), "-", "")
	if len(o.boot) != 32 {
		return o, false, fmt.Errorf("malformed boot id %q", b)
	}
	return o, procShowsSelf(proc, o.pid), nil
}

// procShowsSelf says whether proc is the procfs of this process's own PID
// namespace.
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

// verdict is a sweep's judgement of one leaf.
type verdict int

const (
	notLeaf verdict = iota // not named by this shellsup version: never touched
	live                   // its shellsup is alive
	foreign                // made in another PID namespace or boot: its owner cannot be seen
	dead                   // stale: its shellsup is gone
)

// verdict says whether the leaf called name is stale, as j.me sees it
// through j.proc. Only a leaf of my own namespace and boot is judged, and
// only when j.proc shows that namespace (seesOwn).
func (j judge) verdict(name string) verdict {
	o, ok := parseOwner(name)
	switch {
	case !ok:
		return notLeaf
	case o.ns != j.me.ns || o.boot != j.me.boot || !j.seesOwn:
		return foreign
	}
	start, err := startTime(j.proc, o.pid)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return dead
		}
		return live // unreadable for another reason: leave it
	}
	if start != o.start {
		return dead // the pid was reused
	}
	return live
}
