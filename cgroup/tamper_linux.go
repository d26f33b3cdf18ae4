package cgroup

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"github.com/shellsup/shellsup/internal/linux"

	"golang.org/x/sys/unix"
)

// guard notices a limit file written after shellsup set it. A command of
// shellsup's own uid owns the leaf's files as much as shellsup does and can
// write them (echo max > pids.max); it cannot do so unnoticed: every limit
// file is watched with inotify (IN_MODIFY, raised by any write, even one
// that puts the same value back) and read back when the run ends. Both the
// watch and the files are opened at setup, so no fd is needed later.
type guard struct {
	ino   int // the inotify fd, -1 without one
	files []guarded
	hit   map[string]bool // file names written or found changed: latched
	// blind is why a watch could not be set (no inotify instance or watch
	// left for the uid: another process of it can hold them all). The
	// read-back still catches a value left changed, but not a write that
	// puts it back or a process moved in, so tampered reports it.
	blind string
}

// guarded is one limit file and what it read right after shellsup set it,
// or (writesOnly) a file only a write to counts for: the leaf's process
// lists, which a process moved in from outside is written to.
type guarded struct {
	name       string
	f          *os.File
	want       string
	wd         int
	mask       uint32 // the events that count: IN_MODIFY, or IN_CREATE on a directory
	writesOnly bool
}

// inotifyInit is unix.InotifyInit1; a test makes it fail as it does when
// the uid's instances are all taken.
var inotifyInit = unix.InotifyInit1

func newGuard() *guard { return &guard{ino: -1, hit: map[string]bool{}} }

// watch starts watching path, whose value read back right after shellsup
// wrote it is want. The inotify instance is made with the first watch (a
// run without limits needs none; instances are counted per user, 128 by
// default); without one the read-back alone still catches a value left
// changed.
func (g *guard) watch(path, want string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	wd := g.add(path, unix.IN_MODIFY) // failing: read-back only, and reported
	g.files = append(g.files, guarded{name: filepath.Base(path), f: f, want: want, wd: wd, mask: unix.IN_MODIFY})
	return nil
}

// add makes the inotify instance with the first watch and adds a watch on
// path for mask; -1, with the reason kept in blind, when it cannot.
func (g *guard) add(path string, mask uint32) int {
	if g.ino < 0 && g.blind == "" {
		ino, err := inotifyInit(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			g.blind = "inotify_init1: " + errnoName(err)
			return -1
		}
		g.ino = ino
	}
	if g.ino < 0 {
		return -1
	}
	wd, err := unix.InotifyAddWatch(g.ino, path, mask|unix.IN_MASK_ADD) // a second watch of path adds to the first
	if err != nil {
		if g.blind == "" {
			g.blind = "inotify_add_watch " + filepath.Base(path) + ": " + errnoName(err)
		}
		return -1
	}
	return wd
}

func errnoName(err error) string {
	if e, ok := err.(unix.Errno); ok && unix.ErrnoName(e) != "" {
		return unix.ErrnoName(e)
	}
	return err.Error()
}

// watchEvents watches path for mask only, reported as label: a leaf's
// cgroup.procs or tasks (IN_MODIFY), which shellsup writes at setup only
// (forget clears that), so a later write is a process moved into the leaf
// from outside it, past the limits that held there; or the leaf's
// directory (IN_CREATE), below which shellsup makes nothing, so a new
// entry is a cgroup the command made, whose own process list a process
// can be moved into unwatched. Without an inotify instance it watches
// nothing, and tampered says so.
func (g *guard) watchEvents(path, label string, mask uint32) {
	if wd := g.add(path, mask); wd >= 0 {
		g.files = append(g.files, guarded{name: label, wd: wd, mask: mask, writesOnly: true})
	}
}

// forget drops the writes seen so far to the write-watched files: those
// were shellsup's own.
func (g *guard) forget() {
	g.drain()
	for _, x := range g.files {
		if x.writesOnly {
			delete(g.hit, x.name)
		}
	}
}

// tampered lists, in the order they were set, the limit files written or
// changed since shellsup set them; first, when the watch could not be
// set, that the limits were not watched.
func (g *guard) tampered() []string {
	g.drain()
	var out []string
	if g.blind != "" {
		out = append(out, "limits not watched ("+g.blind+"): a write that puts a value back or a process moved in goes unseen")
	}
	for _, x := range g.files {
		if !x.writesOnly && !g.hit[x.name] && readAt0(x.f) != x.want {
			g.hit[x.name] = true
		}
		if g.hit[x.name] && !slices.Contains(out, x.name) {
			out = append(out, x.name)
		}
	}
	return out
}

// drain reads the inotify events queued so far.
func (g *guard) drain() {
	if g.ino < 0 {
		return
	}
	var buf [4096]byte
	for {
		n, _ := linux.Read(g.ino, buf[:])
		if n <= 0 {
			return // EAGAIN: nothing more
		}
		for b := buf[:n]; len(b) >= unix.SizeofInotifyEvent; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
			g.mark(int(ev.Wd), ev.Mask)
			b = b[min(len(b), unix.SizeofInotifyEvent+int(ev.Len)):]
		}
	}
}

// mark latches the file of watch wd; an overflowed queue marks every file
// (something wrote a great deal).
func (g *guard) mark(wd int, mask uint32) {
	for _, x := range g.files {
		made := x.mask&unix.IN_CREATE == 0 || mask&unix.IN_ISDIR != 0 // a directory: a cgroup
		if mask&unix.IN_Q_OVERFLOW != 0 || (x.wd == wd && mask&x.mask != 0 && made) {
			g.hit[x.name] = true
		}
	}
}

func (g *guard) close() {
	for _, x := range g.files {
		if x.f != nil {
			x.f.Close() // read-only
		}
	}
	g.files = nil
	if g.ino >= 0 {
		unix.Close(g.ino)
		g.ino = -1
	}
}

// readAt0 reads a small control file from its start, trimmed; "" when it
// cannot be read (a removed leaf reads as changed).
func readAt0(f *os.File) string {
	var buf [64]byte
	n, _ := f.ReadAt(buf[:], 0)
	return strings.TrimSpace(string(buf[:n]))
}
