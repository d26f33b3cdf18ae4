package reaper

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// reservedThreads is how many OS threads shellsup holds before the command
// exists. The Go runtime starts a thread whenever a goroutine blocks in a
// system call and another is runnable; shellsup at its busiest has about a
// dozen in use (two running goroutines, the monitor thread, and one each
// blocked in waitid, the control pipe's read, the frames channel's write,
// the parent watch's poll, the spill files' writes and a cleanup's /proc
// reads). 16 leaves room to spare.
const reservedThreads = 16

// reserveThreads makes sure the process has at least reservedThreads OS
// threads, idle in the runtime's pool, so that it never needs to create
// one while the command runs. A command of the same user may lower
// shellsup's RLIMIT_NPROC (prlimit --pid $PPID --nproc=1:1, allowed to any
// process of the same uid): clone then fails with EAGAIN, and a Go runtime
// that cannot start a thread it needs aborts ("fatal error: newosproc"),
// which would end the subreaper boundary as a SIGKILL does. The runtime
// never ends an idle thread, so threads started here stay available.
//
// Each thread is started by a goroutine that locks itself to a thread and
// waits until all have one (so no two share a thread), then unlocks and
// returns, leaving its thread idle in the pool. It costs about 10 µs and
// 40 KiB per thread, once per process.
func reserveThreads() {
	need := reservedThreads - threadCount()
	if need <= 0 {
		return
	}
	var started, release sync.WaitGroup
	started.Add(need)
	release.Add(1)
	var done sync.WaitGroup
	done.Add(need)
	for range need {
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread() // unlocked, the thread returns to the pool (a locked one would exit)
			started.Done()
			release.Wait()
		}()
	}
	started.Wait()
	release.Done()
	done.Wait()
}

// threadCount is the number of OS threads of this process ("Threads:" in
// /proc/self/status), 0 if it cannot be read.
func threadCount() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}
