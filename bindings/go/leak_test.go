package shellsup

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/reaper/reapertest"
)

// TestNoGoroutineOrFdLeak: 100 runs leave no goroutine, no open fd and no
// process behind.
func TestNoGoroutineOrFdLeak(t *testing.T) {
	req := newRequest(t, "true")
	_, _ = Run(context.Background(), req) // warm up: the runtime's own lazily started goroutines and fds
	goroutines, fds := settle(t, -1, -1)
	for i := range 100 {
		res, err := Run(context.Background(), req)
		require.NoError(t, err, "run %d", i)
		require.Equal(t, 0, res.ExitCode, "run %d", i)
	}
	gotG, gotFds := settle(t, goroutines, fds)
	assert.Equal(t, goroutines, gotG, "goroutines before and after 100 runs\n%s", stacks())
	assert.Equal(t, fds, gotFds, "open fds before and after 100 runs: %v", fdList(t))
}

// settle polls, up to a deadline, until the goroutine and fd counts are at
// most the wanted ones (or, with -1, stop changing), and returns them.
func settle(t *testing.T, wantG, wantFds int) (int, int) {
	deadline := time.Now().Add(3 * time.Second)
	lastG, lastFds := -2, -2
	for {
		g, fds := runtime.NumGoroutine(), len(fdList(t))
		done := wantG >= 0 && g <= wantG && fds <= wantFds
		if wantG < 0 && g == lastG && fds == lastFds {
			done = true
		}
		if done || time.Now().After(deadline) {
			return g, fds
		}
		lastG, lastFds = g, fds
		time.Sleep(20 * time.Millisecond)
	}
}

func fdList(t *testing.T) []string {
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name()) // the ReadDir's own fd is gone by now
		out = append(out, e.Name()+"->"+target)
	}
	return out
}

func stacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// The negative control: the leak check this suite relies on does catch a
// process that escaped (setsid, orphaned to the test binary).
func TestLeakCheckCatchesALeak(t *testing.T) {
	tok := reapertest.NewToken()
	cmd := exec.Command("/bin/sh", "-c", "setsid sleep 300 & echo started")
	cmd.Env = env(t, tok)
	require.NoError(t, cmd.Run())
	leaked := reapertest.Find(tok)
	require.NotEmpty(t, leaked, "the leak check missed a setsid sleep")
	assert.Contains(t, leaked[0].Cmdline, "sleep 300")
	reapertest.Kill(tok)
	assert.Empty(t, reapertest.Find(tok))
}
