package affinity

import (
	"os"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxPasses bounds the restoring passes. A pass finds nothing to restore
// once no thread created while the process was held on one CPU is left
// unlisted; one or two passes do.
const maxPasses = 8

// Hold allows every thread of the process only the CPU the caller runs
// on, until release is called; release gives every thread back the CPU set
// the process had, and does nothing the second time.
func Hold() (release func()) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil || all.Count() < 2 {
		return func() {} // nothing to gain on one CPU, nothing known to restore to
	}
	one := oneOf(&all)
	setAll(&one)
	return sync.OnceFunc(func() { restore(&all) })
}

// oneOf is the set of the one CPU the caller runs on (or the first of all,
// should getcpu fail or name a CPU outside it).
func oneOf(all *unix.CPUSet) unix.CPUSet {
	var one unix.CPUSet
	var cpu uint32
	_, _, e := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0)
	if e == 0 && all.IsSet(int(cpu)) {
		one.Set(int(cpu))
		return one
	}
	for c := 0; c < len(all)*64; c++ {
		if all.IsSet(c) {
			one.Set(c)
			break
		}
	}
	return one
}

// setAll gives every thread listed in /proc/self/task the set s; it
// reports how many threads had another set.
func setAll(s *unix.CPUSet) int {
	other := 0
	for _, tid := range threads() {
		var cur unix.CPUSet
		if unix.SchedGetaffinity(tid, &cur) != nil || cur == *s {
			continue // ESRCH: the thread is gone
		}
		other++
		// A thread that cannot be moved keeps its set; the next pass
		// tries again.
		_ = unix.SchedSetaffinity(tid, s)
	}
	return other
}

// restore gives every thread the set all back, then checks, pass after
// pass, until a pass finds no thread with another set. A thread started while the
// process was held inherited the one CPU from the thread that started it;
// that thread was listed, and found held, in the pass the new one missed,
// so the pass after lists it.
func restore(all *unix.CPUSet) {
	for _, tid := range threads() {
		_ = unix.SchedSetaffinity(tid, all) // checked by the passes below
	}
	for range maxPasses {
		if setAll(all) == 0 {
			return
		}
	}
}

// threads are the thread ids in /proc/self/task.
func threads() []int {
	d, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	tids := make([]int, 0, len(d))
	for _, e := range d {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids
}
