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
}

// guarded is one limit file and what it read right after shellsup set it,
// or (writesOnly) a file only a write to counts for: the leaf's process
// lists, which a process moved in from outside is written to.
type guarded struct {
	name       string
	f          *os.File
	want       string
	wd         int
	writesOnly bool
}

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
	if g.ino < 0 && len(g.files) == 0 {
		if ino, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC); err == nil {
			g.ino = ino
		}
	}
	wd := -1
	if g.ino >= 0 {
		wd, _ = unix.InotifyAddWatch(g.ino, path, unix.IN_MODIFY) // failing: read-back only
	}
	g.files = append(g.files, guarded{name: filepath.Base(path), f: f, want: want, wd: wd})
	return nil
}

// watchWrites watches path for writes only, reported as label: a leaf's
// cgroup.procs or tasks, which shellsup writes at setup only (forget
// clears that), so a later write is a process moved into the leaf from
// outside it, past the limits that held there. Without an inotify
// instance it watches nothing (the pids.peak check still sees a move past
// pids.max).
func (g *guard) watchWrites(path, label string) {
	if g.ino < 0 && len(g.files) == 0 {
		if ino, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC); err == nil {
			g.ino = ino
		}
	}
	if g.ino < 0 {
		return
	}
	wd, err := unix.InotifyAddWatch(g.ino, path, unix.IN_MODIFY)
	if err != nil {
		return
	}
	g.files = append(g.files, guarded{name: label, wd: wd, writesOnly: true})
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
// changed since shellsup set them.
func (g *guard) tampered() []string {
	g.drain()
	var out []string
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
		if mask&unix.IN_Q_OVERFLOW != 0 || (x.wd == wd && mask&unix.IN_MODIFY != 0) {
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
