//go:build linux

package linux

import (
	"errors"
	"os"
	"testing"

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
