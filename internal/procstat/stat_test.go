package procstat

import (
	"errors"
	"os"
	"testing"

	"github.com/prometheus/procfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestParse(t *testing.T) {
	line := "42 (a) (b) S 7 1 9 0 -1 4194560 100 0 0 0 11 12 0 0 20 0 1 0 123456 1000 200\n"
	s, err := Parse(42, []byte(line))
	require.NoError(t, err)
	assert.Equal(t, Stat{Pid: 42, PPid: 7, Pgrp: 1, Session: 9, Start: 123456, State: 'S', Comm: "a) (b", UTime: 11, STime: 12}, s)
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
	sid, err := unix.Getsid(0)
	require.NoError(t, err)
	assert.Equal(t, sid, s.Session)
	p, err := procfs.NewProc(os.Getpid())
	require.NoError(t, err)
	ps, err := p.Stat()
	require.NoError(t, err)
	assert.Equal(t, ps.Starttime, s.Start, "prometheus/procfs reads the same start time")
	assert.LessOrEqual(t, uint64(ps.UTime+ps.STime), s.UTime+s.STime, "CPU time read before ours")
	_, err = Read("/no/such/proc", 1)
	assert.ErrorContains(t, err, "reading /no/such/proc/1/stat")
}
