package reaper

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/linux"
)

// Fd starvation. RLIMIT_NOFILE limits fd numbers, and a command of
// shellsup's uid may lower shellsup's limit (prlimit --pid $PPID
// --nofile=3:3, or 0:0) so that no fd at all can be opened: no /proc file,
// no pidfd. What the cleanup still needs then is held from Setup on:
//
//   - the children file of shellsup's main thread, re-read with pread at
//     offset 0 (a seq_file regenerates its text on each read from the
//     start). Every orphan is reparented to the first live thread of its
//     subreaper, the thread-group leader, which never exits in a Go
//     program; bash itself is known to the Waiter by pid.
//   - the Waiter, which peeks at and signals children by pid, pinned.
//
// So a starved cleanup still finds every child of shellsup and kills it by
// pid (see starved); each kill reparents the killed child's children to
// shellsup, where the next round finds them, until wait reports ECHILD:
// no descendant left. It loses only what needs new fds: the deeper
// descendants are not signalled before their parents die, and a straggler
// cannot be described.

// heldChildren is the children file of this process's main thread, opened
// once for the life of the process (Setup calls it, before the command
// exists), or -1 (a kernel without CONFIG_PROC_CHILDREN: the cleanup then
// has no fd-free way to list orphans).
var heldChildren = sync.OnceValue(func() int {
	pid := strconv.Itoa(os.Getpid())
	fd, err := linux.Open("/proc/"+pid+"/task/"+pid+"/children", unix.O_RDONLY, 0)
	if err != nil {
		return -1
	}
	return fd
})

// readHeldChildren lists the children of the main thread through the held
// fd, opening nothing.
func readHeldChildren(fd int) ([]int, error) {
	if fd < 0 {
		return nil, errors.New("no children file held")
	}
	var text []byte
	buf := make([]byte, 4096)
	for {
		n, err := linux.Pread(fd, buf, int64(len(text)))
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		text = append(text, buf[:n]...)
	}
	var out []int
	for _, f := range bytes.Fields(text) {
		if c, err := strconv.Atoi(string(f)); err == nil {
			out = append(out, c)
		}
	}
	return out, nil
}

// starvedErr reports whether err means no fd could be had.
func starvedErr(err error) bool {
	return errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE)
}

// restoreNofile raises RLIMIT_NOFILE back to want (the limit shellsup had
// at Setup) if the command lowered it. The soft limit can always be raised
// up to the hard limit; the hard limit only with CAP_SYS_RESOURCE (root):
// an unprivileged shellsup whose hard limit was lowered stays starved and
// relies on the held fds.
func restoreNofile(want unix.Rlimit) {
	var now unix.Rlimit
	if linux.Getrlimit(unix.RLIMIT_NOFILE, &now) != nil || now.Cur >= want.Cur {
		return
	}
	if linux.Setrlimit(unix.RLIMIT_NOFILE, &want) == nil {
		return
	}
	now.Cur = min(want.Cur, now.Max)
	_ = linux.Setrlimit(unix.RLIMIT_NOFILE, &now) // not permitted: the held fds remain
}
