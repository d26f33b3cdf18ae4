package shellsup

import (
	"context"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The parent-death signal is tied to the OS thread that forked shellsup,
// not to the process (golang/go#27505): when that thread exits, shellsup
// gets SIGTERM. Goroutines that lock a thread and return make the runtime
// end that thread. Here the caller runs Run on a thread of its own, lets
// it go in the middle of the run, and then many threads end: whichever
// thread forked shellsup, the run must not notice.
func TestRunSurvivesExitingThreads(t *testing.T) {
	req := newRequest(t, `echo ready; sleep 1; echo done`)
	req.Progress = func(stream, text string) error {
		if !strings.Contains(text, "ready") {
			return nil
		}
		runtime.UnlockOSThread() // the caller's thread is free to be ended
		var wg sync.WaitGroup
		for range 256 {
			wg.Go(func() {
				runtime.LockOSThread() // returning without unlocking ends the thread
			})
		}
		wg.Wait()
		return nil
	}
	type ran struct {
		res Result
		err error
	}
	done := make(chan ran, 1)
	go onOwnThread(func() {
		res, err := Run(context.Background(), req)
		done <- ran{res, err}
	})
	r := <-done
	require.NoError(t, r.err)
	assert.False(t, r.res.Cancelled, "cancelled with reason %q: a thread exit reached shellsup", r.res.CancelReason)
	assert.Equal(t, "ready\ndone\n", r.res.Stdout)
}

// onOwnThread runs f locked to a thread other than the main thread, which
// the runtime never ends.
func onOwnThread(f func()) {
	runtime.LockOSThread()
	if syscall.Gettid() != os.Getpid() {
		f()
		return // f may have unlocked; if not, the thread ends here
	}
	defer runtime.UnlockOSThread()
	held := make(chan struct{})
	go func() { // the main thread is held by this goroutine: another one runs f
		defer close(held)
		onOwnThread(f)
	}()
	<-held
}
