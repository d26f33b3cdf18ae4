//go:build linux

package linux

import (
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestRetryOnEINTR(t *testing.T) {
	calls := 0
	err := retryOnEINTR(func() error {
		calls++
		if calls < 3 {
			return unix.EINTR
		}
		return unix.EBADF
	})
	assert.Equal(t, 3, calls)
	assert.ErrorIs(t, err, unix.EBADF)
}

func TestErrorsNameTheCall(t *testing.T) {
	var st unix.Stat_t
	err := Fstat(-1, &st)
	var se *os.SyscallError
	require.True(t, errors.As(err, &se), "got %T %v", err, err)
	assert.Equal(t, "fstat", se.Syscall)
	assert.ErrorIs(t, err, unix.EBADF)
	assert.NoError(t, Fstat(0, &st), "nil stays nil")
}

func TestSpliceEAGAINIsReturned(t *testing.T) {
	var p [2]int
	require.NoError(t, Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK))
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer null.Close()
	_, err = Splice(p[0], int(null.Fd()), 4096, unix.SPLICE_F_NONBLOCK)
	assert.ErrorIs(t, err, unix.EAGAIN, "an empty pipe with a writer")
	_, err = unix.Write(p[1], []byte("hello"))
	require.NoError(t, err)
	n, err := Splice(p[0], int(null.Fd()), 4096, unix.SPLICE_F_NONBLOCK)
	require.NoError(t, err)
	assert.EqualValues(t, 5, n)
}

// TestPollInterruptedKeepsItsTimeout: signals at the polling thread every
// 20 ms interrupt poll(2) again and again; Poll still returns at its 300 ms
// timeout, not 300 ms after the last signal.
func TestPollInterruptedKeepsItsTimeout(t *testing.T) {
	var p [2]int
	require.NoError(t, Pipe2(p[:], unix.O_CLOEXEC))
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	tids := make(chan int)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tid := <-tids
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for end := time.After(time.Second); ; { // bounded: a Poll that restarted its timeout ends 300 ms after
			select {
			case <-stop:
				return
			case <-end:
				return
			case <-tick.C:
				_ = unix.Tgkill(unix.Getpid(), tid, unix.SIGURG) // the Go runtime ignores a stray SIGURG
			}
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tids <- unix.Gettid()
	start := time.Now()
	n, err := Poll([]unix.PollFd{{Fd: int32(p[0]), Events: unix.POLLIN}}, 300)
	took := time.Since(start)
	require.NoError(t, err)
	assert.Equal(t, 0, n, "nothing was written")
	assert.Less(t, took, 700*time.Millisecond, "the timeout grew with the interruptions")
	assert.GreaterOrEqual(t, took, 280*time.Millisecond, "returned before the timeout")
}
