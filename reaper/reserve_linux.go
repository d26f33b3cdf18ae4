package reaper

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// maxProcs caps GOMAXPROCS. shellsup mostly waits: two pumps, a writer,
// the waiter and a cleanup never keep more than a few CPUs busy, while
// every P may want a thread of its own (GC workers, spinning threads). The
// cap keeps the number of threads the runtime can ask for bounded on any
// host (the binary turns off the cgroup-aware GOMAXPROCS, so it would
// otherwise be the host's CPU count).
const maxProcs = 4

// spareThreads is how many threads beyond one per P shellsup holds: about
// a dozen can be blocked in system calls at once (waitid, the control
// pipe's read, the frames channel's write, the parent watch's poll, the
// spill files' writes, a cleanup's /proc reads, the monitor thread).
const spareThreads = 12

// reserveThreads caps GOMAXPROCS at maxProcs and makes sure the process
// has one OS thread per P and spareThreads more, idle in the runtime's
// pool, so that it never needs to create one while the command runs. A
// command of the same user may lower shellsup's RLIMIT_NPROC (prlimit
// --pid $PPID --nproc=1:1, allowed to any process of the same uid): clone
// then fails with EAGAIN, and a Go runtime that cannot start a thread it
// needs aborts ("fatal error: newosproc"), which would end the subreaper
// boundary as a SIGKILL does. The runtime never ends an idle thread, so
// threads started here stay available.
//
// Each thread is started by a goroutine that locks itself to a thread and
// waits until all have one (so no two share a thread), then unlocks and
// returns, leaving its thread idle in the pool. It costs about 10 µs and
// 40 KiB per thread, once per process.
func reserveThreads() {
	if runtime.GOMAXPROCS(0) > maxProcs {
		runtime.GOMAXPROCS(maxProcs)
	}
	need := runtime.GOMAXPROCS(0) + spareThreads - threadCount()
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
