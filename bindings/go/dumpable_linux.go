package shellsup

import (
	"sync"

	"golang.org/x/sys/unix"
)

// The harness is made non-dumpable (PR_SET_DUMPABLE 0) while any run or
// job of this package is open, and given its old setting back after the
// last one. A command runs as the harness's user: while the harness is
// dumpable, such a command can ptrace it or take its fds with pidfd_getfd
// (the frames sockets included), and read /proc/<harness>/environ and
// /proc/<harness>/fd. A non-dumpable process refuses all of that to every
// caller without CAP_SYS_PTRACE; a root command keeps it (run it with
// Request.User). The setting is per process and is reset at exec, so
// shellsup and the command are not affected by it.
//
// Once a run or job of this process was unreported (shellsup died, or its
// report did not count), the old setting is never given back: what that
// command started may still be running as the harness's user, with nothing
// left to stop it, and would otherwise find the harness dumpable again.
var dumpable struct {
	sync.Mutex
	holds int
	was   int  // PR_GET_DUMPABLE before the first hold
	kept  bool // an unreported run: non-dumpable for the rest of the process's life
}

// holdUndumpable adds one hold; the first makes the process non-dumpable.
func holdUndumpable() {
	dumpable.Lock()
	defer dumpable.Unlock()
	if dumpable.holds == 0 {
		was, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		if err != nil {
			was = 0 // unknown: never made dumpable again
		}
		dumpable.was = was
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) // cannot fail for 0; if it did, the run goes on as before
	}
	dumpable.holds++
}

// releaseUndumpable drops one hold; the last gives back the old setting.
func releaseUndumpable() {
	dumpable.Lock()
	defer dumpable.Unlock()
	if dumpable.holds == 0 {
		return
	}
	if dumpable.holds--; dumpable.holds == 0 && dumpable.was == 1 && !dumpable.kept {
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0) // back as it was; a failure leaves it safer
	}
}

// keepUndumpable makes the process non-dumpable for the rest of its life:
// a run was unreported, and what its command started may survive it.
func keepUndumpable() {
	dumpable.Lock()
	defer dumpable.Unlock()
	dumpable.kept = true
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) // cannot fail for 0
}
