package reaper

import (
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A Waiter is the one place in shellsup that waits for children. It reaps
// every child as soon as it exits (the command's leader, bash, and every
// orphan reparented to shellsup as subreaper), records the leader's status,
// and reports when no child is left.
type Waiter struct {
	leader  int
	wake    <-chan os.Signal
	exited  chan struct{} // closed when the leader is reaped
	empty   chan struct{} // closed when wait reports ECHILD
	reaped  chan struct{} // pulsed after each batch of reaps
	mu      sync.Mutex
	status  unix.WaitStatus
	nReaped int
}

// tick bounds how long a lost SIGCHLD can delay a reap.
const tick = 50 * time.Millisecond

// StartWaiter starts the waiting goroutine. leader is bash's pid; sigchld
// must have been registered with signal.Notify for SIGCHLD before the
// leader was forked, so no exit is missed.
func StartWaiter(leader int, sigchld <-chan os.Signal) *Waiter {
	w := &Waiter{
		leader: leader,
		wake:   sigchld,
		exited: make(chan struct{}),
		empty:  make(chan struct{}),
		reaped: make(chan struct{}, 1),
	}
	go w.loop()
	return w
}

// LeaderExited is closed once the leader has been reaped.
func (w *Waiter) LeaderExited() <-chan struct{} { return w.exited }

// Empty is closed once shellsup has no child left. With the subreaper bit
// set that means no descendant is left.
func (w *Waiter) Empty() <-chan struct{} { return w.empty }

// Reaped pulses (non-blocking, coalescing) after children were reaped.
func (w *Waiter) Reaped() <-chan struct{} { return w.reaped }

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

func (w *Waiter) loop() {
	t := time.NewTicker(tick)
	defer t.Stop()
	leaderSeen := false
	for {
		none, leader := w.reapAll()
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
		select {
		case <-w.wake:
		case <-t.C:
		}
	}
}

// reapAll reaps every child that has exited, and reports whether no child
// is left and whether the leader was among those reaped. SIGCHLDs coalesce,
// so one wake-up can stand for many exits.
func (w *Waiter) reapAll() (none, leader bool) {
	n := 0
	defer func() {
		if n > 0 {
			select {
			case w.reaped <- struct{}{}:
			default:
			}
		}
	}()
	for {
		var ws unix.WaitStatus
		// __WALL also reaps clone children whose exit signal is not SIGCHLD.
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG|unix.WALL, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.ECHILD:
			return true, leader
		case err != nil:
			// wait4 fails otherwise only on bad arguments; retry on the next tick.
			return false, leader
		case pid <= 0:
			return false, leader
		}
		n++
		if w.record(pid, ws) {
			leader = true
		}
	}
}

// record counts a reaped child and keeps the leader's status.
func (w *Waiter) record(pid int, ws unix.WaitStatus) (isLeader bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nReaped++
	if pid == w.leader {
		w.status = ws
		return true
	}
	return false
}
