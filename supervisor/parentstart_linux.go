package supervisor

import (
	"os"

	"golang.org/x/sys/unix"
)

// startParent is shellsup's parent as the process found it first, during
// package initialisation, before main: the parent the run watches. Read
// any later, a parent that dies while shellsup starts up would be taken
// for the reaper that adopted shellsup.
var startParent = os.Getppid()

// orphanedAtStart reports whether the parent that started shellsup had
// already died when startParent was read, so that startParent is the
// reaper that adopted shellsup (init, or a subreaper such as systemd
// --user). A process inherits its parent's session when it is forked and
// leaves it only by setsid, which makes it the leader of a session of its
// own. So a shellsup that leads no session is in the session of the parent
// that forked it, and a "parent" in another session is an adopter: that
// parent is gone. (A live parent that itself called setsid after forking
// shellsup would be taken for gone too.)
//
// A session leader's session says nothing of its parent, and an adopter in
// shellsup's own session (a subreaper in the same session, e.g. a test
// harness whose bash started shellsup in the background and exited) cannot
// be told from a parent: then startParent is watched as the parent. ppid 0
// (the parent is outside shellsup's PID namespace) is never judged.
func orphanedAtStart(ppid int) bool {
	if ppid <= 0 {
		return false
	}
	sid, err := unix.Getsid(0)
	if err != nil || sid == unix.Getpid() {
		return false
	}
	parentSid, err := unix.Getsid(ppid)
	return err == nil && parentSid != sid
}
