package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// Stat is what shellsup reads of one process from /proc/PID/stat.
type Stat struct {
	Pid     int
	PPid    int
	Pgrp    int    // the process group id (field 5)
	Session int    // the session id (field 6): the pid of the leader that called setsid
	Start   uint64 // start time in clock ticks since boot: with Pid, the process's identity
	State   byte   // R, S, D, T, t, Z, X, ...
	Comm    string
	UTime   uint64 // user CPU time in clock ticks (USER_HZ, 100 on Linux), children not included
	STime   uint64 // system CPU time in clock ticks, children not included
}

// ErrShort is wrapped by the error for a line with too few fields.
var ErrShort = errors.New("too few fields")

// Read reads and parses root/PID/stat (root is normally "/proc"). A
// process that is gone gives errors.Is(err, os.ErrNotExist).
func Read(root string, pid int) (Stat, error) {
	return read(root+"/"+strconv.Itoa(pid)+"/stat", pid)
}

// ReadSelf reads and parses root/self/stat: this process as the procfs
// mounted at root numbers it (Pid is this process's own pid, as os.Getpid
// gives it).
func ReadSelf(root string) (Stat, error) {
	return read(root+"/self/stat", os.Getpid())
}

func read(path string, pid int) (Stat, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Stat{}, fmt.Errorf("reading %s: %w", path, err)
	}
	return Parse(pid, data)
}

// Parse parses the text of /proc/PID/stat.
func Parse(pid int, data []byte) (Stat, error) {
	l := bytes.IndexByte(data, '(')
	r := bytes.LastIndexByte(data, ')')
	if l < 0 || r < l || r+2 > len(data) {
		return Stat{}, fmt.Errorf("parsing /proc/%d/stat: no (comm) in %q", pid, data)
	}
	s := Stat{Pid: pid, Comm: string(data[l+1 : r])}
	// Fields after "comm) ": state(3) ppid(4) ... starttime(22).
	rest := data[r+2:]
	for field := 3; field <= 22; field++ {
		var tok []byte
		tok, rest = nextField(rest)
		if tok == nil {
			return Stat{}, fmt.Errorf("parsing /proc/%d/stat: %w at field %d", pid, ErrShort, field)
		}
		if err := s.set(field, tok); err != nil {
			return Stat{}, fmt.Errorf("parsing /proc/%d/stat: %w", pid, err)
		}
	}
	return s, nil
}

// set stores the field numbered field (1-based, as in proc(5)) if it is
// one that Stat keeps.
func (s *Stat) set(field int, tok []byte) error {
	var err error
	switch field {
	case 3:
		s.State = tok[0]
	case 4:
		if s.PPid, err = strconv.Atoi(string(tok)); err != nil {
			return fmt.Errorf("ppid: %w", err)
		}
	case 5:
		if s.Pgrp, err = strconv.Atoi(string(tok)); err != nil {
			return fmt.Errorf("pgrp: %w", err)
		}
	case 6:
		if s.Session, err = strconv.Atoi(string(tok)); err != nil {
			return fmt.Errorf("session: %w", err)
		}
	case 14:
		if s.UTime, err = strconv.ParseUint(string(tok), 10, 64); err != nil {
			return fmt.Errorf("utime: %w", err)
		}
	case 15:
		if s.STime, err = strconv.ParseUint(string(tok), 10, 64); err != nil {
			return fmt.Errorf("stime: %w", err)
		}
	case 22:
		if s.Start, err = strconv.ParseUint(string(tok), 10, 64); err != nil {
			return fmt.Errorf("starttime: %w", err)
		}
	}
	return nil
}

// nextField splits off the next space-separated token.
func nextField(b []byte) (tok, rest []byte) {
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	if len(b) == 0 {
		return nil, nil
	}
	i := bytes.IndexAny(b, " \n")
	if i < 0 {
		return b, nil
	}
	return b[:i], b[i+1:]
}

// OtherThreads reports whether process pid has a thread besides its
// leader: its task directory lists more than one tid. A leader in state Z
// is a dead process only without one (a program whose main thread exits
// while others run shows Z and lives on). false if pid is gone.
func OtherThreads(root string, pid int) bool {
	tasks, err := os.ReadDir(root + "/" + strconv.Itoa(pid) + "/task")
	return err == nil && len(tasks) > 1
}
