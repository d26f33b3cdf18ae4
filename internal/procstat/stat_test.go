package procstat

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	line := "42 (a) (b) S 7 1 1 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123456 1000 200\n"
	s, err := Parse(42, []byte(line))
	require.NoError(t, err)
	assert.Equal(t, Stat{Pid: 42, PPid: 7, Start: 123456, State: 'S', Comm: "a) (b"}, s)
}

func TestParseShort(t *testing.T) {
	_, err := Parse(42, []byte("42 (sleep) S 1 2 3"))
	assert.True(t, errors.Is(err, ErrShort), "got %v", err)
	assert.ErrorContains(t, err, "/proc/42/stat")
}

func TestReadSelf(t *testing.T) {
	s, err := Read("/proc", os.Getpid())
	require.NoError(t, err)
	assert.Equal(t, os.Getppid(), s.PPid)
	_, err = Read("/no/such/proc", 1)
	assert.ErrorContains(t, err, "reading /no/such/proc/1/stat")
}
