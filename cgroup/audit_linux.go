package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The audit: a member of the tree found outside the leaves. A root command
// can write its pid into any cgroup.procs (the v1 pids root, to escape
// --max-procs), and the owner of a delegated v2 subtree can move a process
// within it. The /proc walk still kills such a process, found by its
// parentage; the leaf lists it in Stats.Tampered, "left the leaf: pid N now
// in /". The reaper calls Missing with the members it has just verified,
// confirms each one returned (alive, the same process) and asks Where.

// maxLeft bounds the notes; the rest are counted in one more.
const maxLeft = 10

// leftList is what the audit found.
type leftList struct {
	pids   []int
	said   []string
	more   int
	unread string // a process list the audit could not read, said once
}

func (a *leftList) cannotRead(note string) {
	if a.unread == "" {
		a.unread = note
	}
}

func (a *leftList) add(pid int, where string) {
	if slices.Contains(a.pids, pid) {
		return
	}
	a.pids = append(a.pids, pid)
	if len(a.said) < maxLeft {
		a.said = append(a.said, fmt.Sprintf("left the leaf: pid %d now in %s", pid, where))
		return
	}
	a.more++
}

func (a *leftList) notes() []string {
	out := slices.Clone(a.said)
	if a.more > 0 {
		out = append(out, fmt.Sprintf("left the leaf: %d more processes", a.more))
	}
	if a.unread != "" {
		out = append(out, a.unread)
	}
	return out
}

// Missing returns those of pids that are in no process list of the leaf
// (or the cgroups below it) in some hierarchy, v2 or v1; nil when the leaf
// is closed, or when a leaf's list cannot be read: that is reported among
// the tampering (the list is read through the descriptor opened with the
// leaf, so neither a lowered RLIMIT_NOFILE nor a v1 rename can hide it).
func (l *Leaf) Missing(pids []int) []int {
	if l.closed {
		return nil
	}
	var out []int
	for _, x := range l.lists() {
		in, stale, err := x.held.list()
		if err != nil {
			l.left.cannotRead(fmt.Sprintf("the process list of %s could not be read at the cleanup (%v): a member outside it goes unseen", x.where, err))
			return nil
		}
		if stale != "" {
			l.left.cannotRead(fmt.Sprintf("the process list of %s was %s: a member outside it may go unseen", x.where, stale))
		}
		for _, p := range procsBelow(x.dir) { // sub-cgroups: by path, at best (a renamed leaf's are missed, so reported)
			in[p] = true
		}
		for _, p := range pids {
			if !in[p] && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// list is one leaf to audit.
type list struct {
	dir, where string
	held       held
}

// lists are the leaves: the v2 one first, then the v1 ones.
func (l *Leaf) lists() []list {
	var out []list
	if l.dir != "" {
		out = append(out, list{l.dir, "the leaf", l.held})
	}
	for _, v := range l.v1 {
		out = append(out, list{v.dir, "the v1 " + v.controller + " leaf", v.held})
	}
	return out
}

// Where names pid's cgroup in the first hierarchy where it is outside the
// leaf: the path as /proc/PID/cgroup gives it, with the v1 controller
// named; "" when it is inside every leaf or cannot be read.
func (l *Leaf) Where(pid int) string {
	theirs, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE) {
		return "a cgroup that could not be read (" + err.Error() + ")" // not in the list Missing read
	}
	if err != nil {
		return ""
	}
	ours := l.selfCg
	if ours == nil {
		if ours, err = os.ReadFile("/proc/self/cgroup"); err != nil {
			return ""
		}
	}
	if l.dir != "" && l.selfV2 != "" {
		if at, ok := outside(ours, theirs, "", l.selfV2, l.dir); ok {
			return at
		}
	}
	for _, v := range l.v1 {
		if at, ok := outside(ours, theirs, v.controller, v.home, v.dir); ok {
			return at + " of the v1 " + v.controller + " hierarchy"
		}
	}
	return ""
}

// Left records that pid, a member of the tree, was found in cgroup where.
func (l *Leaf) Left(pid int, where string) { l.left.add(pid, where) }

// outside: in the hierarchy of controller ("" for v2), is the process
// whose /proc/PID/cgroup is theirs outside leaf? home is shellsup's own
// cgroup there (absolute), ours shellsup's /proc/self/cgroup: the leaf's
// path as /proc shows it is ours's path joined with leaf relative to home.
func outside(ours, theirs []byte, controller, home, leaf string) (string, bool) {
	mine, ok := cgroupLine(ours, controller)
	if !ok {
		return "", false
	}
	at, ok := cgroupLine(theirs, controller)
	if !ok {
		return "", false
	}
	rel, err := filepath.Rel(home, leaf)
	if err != nil {
		return "", false
	}
	want := filepath.Join(mine, rel)
	if at == want || strings.HasPrefix(at, want+"/") {
		return "", false
	}
	return at, true
}

// cgroupLine is the path of the /proc/PID/cgroup line for controller: the
// "0::" line for "", else the v1 line whose controllers include it.
func cgroupLine(b []byte, controller string) (string, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if controller == "" && parts[0] == "0" && parts[1] == "" {
			return parts[2], true
		}
		if controller != "" && slices.Contains(strings.Split(parts[1], ","), controller) {
			return parts[2], true
		}
	}
	return "", false
}
