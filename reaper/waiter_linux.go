package reaper

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/linux"
)

// A Waiter is the one place in shellsup that waits for children. It reaps
// every child as soon as it exits (the command's leader, bash, and every
// orphan reparented to shellsup as subreaper), records the leader's status,
// and reports when no child is left.
//
// It blocks in waitid(P_ALL, WNOWAIT) until some child has exited, then
// reaps every exited child with wait4(WNOHANG). A blocking wait cannot miss
// an exit, so no SIGCHLD handling is involved (SIGCHLDs coalesce; a design
// driven by them must loop and poll to be safe).
type Waiter struct {
	leader int
	exited chan struct{} // closed when the leader is reaped
	empty  chan struct{} // closed when wait reports ECHILD
	reapMu sync.Mutex    // held around each reap; see Pin
	mu     sync.Mutex
	status unix.WaitStatus
	// leaderReaped: status is set. The leader's pid is free once it is
	// reaped, and an orphan that later takes it and is reaped in turn
	// must not overwrite the leader's status.
	leaderReaped bool
	nReaped      int
	// Under reapMu: reaps counts every reap, and once a cleanup has
	// started (reapedAt not nil) reapedAt[pid] is the count at pid's last
	// reap. A cleanup remembers the count when it verified a child, so a
	// child reaped since, whose pid may name another child now, is told
	// apart from the one it verified.
	reaps    uint64
	reapedAt map[int]uint64
}

// StartWaiter starts the waiting goroutine for the children of this
// process; leader is bash's pid. Start it right after the leader is forked.
func StartWaiter(leader int) *Waiter {
	w := &Waiter{
		leader: leader,
		exited: make(chan struct{}),
		empty:  make(chan struct{}),
	}
	go w.loop()
	return w
}

// LeaderExited is closed once the leader has been reaped.
func (w *Waiter) LeaderExited() <-chan struct{} { return w.exited }

// Empty is closed once shellsup has no child left. With the subreaper bit
// set that means no descendant is left.
func (w *Waiter) Empty() <-chan struct{} { return w.empty }

// LeaderStatus is the leader's wait status; valid once LeaderExited is closed.
func (w *Waiter) LeaderStatus() unix.WaitStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status
}

// Count is the number of children reaped so far, the leader included.
func (w *Waiter) Count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.nReaped
}

// Pin runs f while no child is reaped. Until f returns, every pid that
// names a child of shellsup keeps naming that child (running or zombie):
// the kernel frees a child's pid only when it is reaped. f may therefore
// signal children by pid. f must be short; it delays reaping.
func (w *Waiter) Pin(f func()) {
	w.reapMu.Lock()
	defer w.reapMu.Unlock()
	f()
}

// isChild reports whether pid names a child of shellsup that has not been
// reaped. It peeks with WNOWAIT and consumes no status: loop stays the only
// reaper. Call it pinned, or the answer may be stale.
func (w *Waiter) isChild(pid int) bool {
	var info unix.Siginfo
	return linux.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT|unix.WALL) == nil
}

// A childState is what waitid says of a pid: not an unreaped child of
// shellsup, a child that has exited (a zombie not yet reaped), or a child
// that has not exited (running, sleeping or stopped).
type childState int

const (
	notChild childState = iota
	exitedChild
	liveChild
)

// childState peeks at pid as isChild does; call it pinned. A process whose
// leader thread exited while other threads run is not reported exited (the
// kernel reports a thread group's exit once all of it is dead).
func (w *Waiter) childState(pid int) childState {
	var info unix.Siginfo
	if linux.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT|unix.WALL) != nil {
		return notChild
	}
	// SIGCHLD in si_signo: an exited child was found (0: not exited).
	if info.Signo == int32(unix.SIGCHLD) {
		return exitedChild
	}
	return liveChild
}

// LeaderDone reports whether the leader has exited, reaped or not: it
// also asks waitid(WNOWAIT), which sees an exit the Waiter has not reaped
// yet. An exit that happened before a timer fired thus wins the tie even
// when the timer's goroutine ran first.
func (w *Waiter) LeaderDone() bool {
	select {
	case <-w.exited:
		return true
	default:
	}
	var info unix.Siginfo
	err := linux.Waitid(unix.P_PID, w.leader, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT|unix.WALL)
	// SIGCHLD in si_signo: an exited child was found (0: still running).
	// ECHILD: no such child any more, so it was reaped.
	return err == nil && info.Signo == int32(unix.SIGCHLD) || err == unix.ECHILD
}

// track starts recording reaps by pid; call it pinned.
func (w *Waiter) track() {
	if w.reapedAt == nil {
		w.reapedAt = map[int]uint64{}
	}
}

// seq is the reap count; call it pinned.
func (w *Waiter) seq() uint64 { return w.reaps }

// reapedSince reports whether pid was reaped after the reap count was
// seq; call it pinned, after track.
func (w *Waiter) reapedSince(pid int, seq uint64) bool { return w.reapedAt[pid] > seq }

func (w *Waiter) loop() {
	leaderSeen := false
	for {
		none := !waitExited()
		var leader bool
		if !none {
			none, leader = w.reapAll()
		}
		// Empty is closed before LeaderExited, so whoever sees the leader
		// gone also sees whether the rest of the tree is already gone.
		if none {
			close(w.empty)
		}
		if (leader || none) && !leaderSeen {
			// (none without leader: another waiter took bash's status,
			// which shellsup never does; close anyway so no one hangs.)
			leaderSeen = true
			close(w.exited)
		}
		if none {
			return
		}
	}
}

// waitExited blocks until some child has exited, without reaping it, and
// reports false when there is no child at all (ECHILD).
func waitExited() bool {
	var info unix.Siginfo
	// waitid fails otherwise only on bad arguments; the reap loop that
	// follows reports ECHILD if there is nothing to wait for.
	return linux.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOWAIT|unix.WALL) != unix.ECHILD
}

// reapBatch is how many children one hold of the reap lock reaps at most:
// the lock changes hands once per batch, and a pin waits at most that many
// reaps.
const reapBatch = 32

// reapAll reaps every child that has exited, and reports whether no child
// is left and whether the leader was among those reaped.
func (w *Waiter) reapAll() (none, leader bool) {
	for {
		var more bool
		none, more, leader = w.reapSome(leader)
		if !more {
			return none, leader
		}
	}
}

// reapSome reaps up to reapBatch exited children under one hold of the
// reap lock. It reports whether no child is left, whether more may be
// waiting, and leader or whether the leader was among them.
func (w *Waiter) reapSome(leader bool) (none, more, isLeader bool) {
	w.reapMu.Lock()
	defer w.reapMu.Unlock()
	for range reapBatch {
		var ws unix.WaitStatus
		pid, err := w.reapOne(&ws)
		switch {
		case err == unix.ECHILD:
			return true, false, leader
		case err != nil || pid <= 0:
			return false, false, leader
		}
		if w.record(pid, ws) {
			leader = true
		}
	}
	return false, true, leader
}

// reapOne reaps one exited child, if any, and notes its pid's reap count.
// Call it with reapMu held.
func (w *Waiter) reapOne(ws *unix.WaitStatus) (int, error) {
	// __WALL also reaps clone children whose exit signal is not SIGCHLD.
	pid, err := linux.Wait4(-1, ws, unix.WNOHANG|unix.WALL)
	if err == nil && pid > 0 {
		w.reaps++
		if w.reapedAt != nil {
			w.reapedAt[pid] = w.reaps
		}
	}
	return pid, err
}

// record counts a reaped child and keeps the leader's status: that of the
// first child reaped under the leader's pid, which is the leader (a pid is
// not reused while its process is unreaped).
func (w *Waiter) record(pid int, ws unix.WaitStatus) (isLeader bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nReaped++
	if pid == w.leader && !w.leaderReaped {
		w.status, w.leaderReaped = ws, true
		return true
	}
	return false
}

// StopLeader settles a tie between the leader's exit and a deadline or a
// cancel: it stops the leader (SIGSTOP, sent pinned, so the pid is still
// the leader's) and reports whether the leader exited before the stop took
// hold. A stopped leader cannot exit by itself any more, so from then on
// the deadline or the cancel is the first cause; a leader that exits before
// it stops made it. The cleanup's SIGTERM+SIGCONT resumes a stopped leader.
// within bounds the wait for the stop (a leader in D sleep stops late).
func (w *Waiter) StopLeader(within time.Duration) (exited bool) {
	sent := false
	w.Pin(func() {
		if w.childState(w.leader) == liveChild {
			sent = unix.Kill(w.leader, unix.SIGSTOP) == nil
		}
	})
	if !sent {
		return w.LeaderDone()
	}
	for deadline := time.Now().Add(within); ; time.Sleep(50 * time.Microsecond) {
		if w.LeaderDone() {
			return true
		}
		if w.leaderStopped() || time.Now().After(deadline) {
			return false
		}
	}
}

// leaderStopped peeks (WNOWAIT) at whether the leader is in a stop.
func (w *Waiter) leaderStopped() bool {
	var info unix.Siginfo
	err := linux.Waitid(unix.P_PID, w.leader, &info, unix.WSTOPPED|unix.WNOHANG|unix.WNOWAIT)
	return err == nil && info.Signo == int32(unix.SIGCHLD) && info.Code == cldStopped
}

// cldStopped is CLD_STOPPED, si_code of a child's stop.
const cldStopped = 5
