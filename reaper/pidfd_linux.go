package reaper

import (
	"errors"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/linux"
)

// probePidfd checks once, by trying, that pidfd_open and
// pidfd_send_signal work on this kernel (5.3+).
var probePidfd = sync.OnceValue(func() error {
	fd, err := pidfdOpen(os.Getpid())
	if err != nil {
		return &UnavailableError{What: "probing pidfd support", Err: err}
	}
	defer unix.Close(fd) // probe only
	if err := pidfdSignal(fd, 0); err != nil {
		return &UnavailableError{What: "probing pidfd support", Err: err}
	}
	return nil
})

// pidfdOpen opens a pidfd, falling back on the fd reserve.
func pidfdOpen(pid int) (int, error) {
	return openFd(func() (int, error) { return linux.PidfdOpen(pid) })
}

func pidfdSignal(fd int, sig unix.Signal) error { return linux.PidfdSendSignal(fd, sig) }

// errReused: the pid now names a different process than the scan saw.
var errReused = errors.New("pid was reused by another process")

// errExited: the target has exited and is a zombie awaiting its reaper; no
// signal reaches it, and none is needed.
var errExited = errors.New("process has exited")

// openChecked opens a pidfd for pid, then reads /proc/PID/stat again and
// keeps the pidfd only if ok accepts what it shows. The pidfd was opened
// first, so if the process it refers to is still alive after the read, the
// read described that process; if it died meanwhile, every signal through
// the pidfd fails with ESRCH and reaches nobody.
func openChecked(d *procDir, pid int, ok func(now proc) bool) (int, error) {
	fd, err := pidfdOpen(pid)
	if err != nil {
		return -1, err
	}
	now, err := d.stat(pid)
	if err == nil && !ok(now) {
		err = errReused
	}
	if err != nil {
		unix.Close(fd) // unused
		return -1, err
	}
	return fd, nil
}

// openVerified returns a pidfd for a process a scan saw, p: same start time,
// and still a child of the parent the scan saw (or of shellsup, if that
// parent died since): a pid reused within the same clock tick by a
// stranger fails the parent check.
func openVerified(d *procDir, p proc) (int, error) {
	self := os.Getpid()
	return openChecked(d, p.pid, func(now proc) bool {
		return now.start == p.start && (now.ppid == p.ppid || now.ppid == self)
	})
}

// openFirm returns a pidfd for a descendant whose identity is firm (see
// firm): the same pid and start time can only be the same process.
func openFirm(d *procDir, t *target) (int, error) {
	return openChecked(d, t.pid, func(now proc) bool { return now.start == t.start })
}

// clockTick is the unit of the start time in /proc/PID/stat (USER_HZ is
// 100 on every architecture shellsup builds for).
const clockTick = 10 * time.Millisecond

// bootTicks is CLOCK_BOOTTIME in clock ticks, the clock /proc/PID/stat's
// start time counts (both are shifted alike inside a time namespace).
func bootTicks() uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		panic("clock_gettime(CLOCK_BOOTTIME): " + err.Error()) // cannot fail on Linux ≥ 2.6.39
	}
	return uint64(ts.Nano() / int64(clockTick))
}

// firm makes the identity (pid, start time) of the process behind fd,
// started at tick start, firm: it waits until the clock has left tick
// start, then checks through the pidfd that the process is still alive.
// A process alive after its start tick keeps its pid until it is reaped,
// and any process that takes the pid afterwards starts in a later tick: so
// from then on "same pid and same start time" names this process and no
// other, and no pidfd needs to be held to recognise it.
func firm(fd int, start uint64) bool {
	if start > bootTicks()+1 {
		return false // a start time in the future: not this clock's, never firm
	}
	for bootTicks() <= start {
		time.Sleep(clockTick / 4)
	}
	return pidfdSignal(fd, 0) == nil
}

// kill sends sig to pid. Only for children of shellsup, with the Waiter
// pinned (see Waiter.Pin): then the pid cannot have been reused.
func kill(pid int, sig unix.Signal) error { return linux.Kill(pid, sig) }
