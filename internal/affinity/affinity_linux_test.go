package affinity

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// sets are the CPU sets of every thread of this process, by thread id.
func sets(t *testing.T) map[int]unix.CPUSet {
	t.Helper()
	out := map[int]unix.CPUSet{}
	for _, tid := range threads() {
		var s unix.CPUSet
		if unix.SchedGetaffinity(tid, &s) == nil {
			out[tid] = s
		}
	}
	require.NotEmpty(t, out)
	return out
}

// startThreads makes the runtime start n more OS threads and returns once
// they run: each of n goroutines holds a thread of its own until release.
func startThreads(n int) (release func()) {
	var started, done sync.WaitGroup
	hold := make(chan struct{})
	started.Add(n)
	done.Add(n)
	for range n {
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			started.Done()
			<-hold
		}()
	}
	started.Wait()
	return func() { close(hold); done.Wait() }
}

// TestHoldThenRelease: while held, every thread of the process, those
// started after Hold included, may run on one CPU only; after release,
// every thread (those started while held included, which inherited the
// one CPU) has the process's CPU set again.
func TestHoldThenRelease(t *testing.T) {
	var all unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &all))
	if all.Count() < 2 {
		t.Skip("one CPU here: Hold narrows nothing")
	}
	release := Hold()
	stop := startThreads(8) // started while held: they inherit the one CPU
	held := sets(t)
	var one unix.CPUSet
	for _, s := range held {
		one = s
		break
	}
	assert.Equal(t, 1, one.Count(), "held on one CPU")
	for tid, s := range held {
		assert.Equal(t, one, s, "thread %d is held on the same CPU", tid)
	}
	release()
	for tid, s := range sets(t) {
		assert.Equal(t, all, s, "thread %d has every CPU again", tid)
	}
	stop()
	release() // the second call does nothing
	for tid, s := range sets(t) {
		assert.Equal(t, all, s, "thread %d", tid)
	}
}

// TestHoldOnOneCPU: a process allowed one CPU only is left as it is.
func TestHoldOnOneCPU(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var all, one unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &all))
	one.Set(lowest(&all))
	require.NoError(t, unix.SchedSetaffinity(0, &one))
	defer func() { require.NoError(t, unix.SchedSetaffinity(0, &all)) }()
	// Only this thread is narrowed: Hold reads the caller's set, finds one
	// CPU, and must touch no other thread.
	before := sets(t)
	release := Hold()
	release()
	assert.Equal(t, before, sets(t))
}

func lowest(s *unix.CPUSet) int {
	for c := 0; ; c++ {
		if s.IsSet(c) {
			return c
		}
	}
}
