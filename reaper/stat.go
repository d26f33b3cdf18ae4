package reaper

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// proc is what the cleanup needs to know of one process, from /proc/PID/stat.
type proc struct {
	pid   int
	ppid  int
	start uint64 // start time in clock ticks since boot: with pid, the process's identity
	state byte   // R, S, D, T, t, Z, X, ...
	comm  string
}

// parseStat parses the text of /proc/PID/stat. The command name sits in
// parentheses and may itself hold spaces and parentheses, so the fields are
// counted from the last ')'. It is hand-written rather than procfs's
// ProcStat because a cleanup scans every process on the machine several
// times and fmt.Fscan over 40 fields costs tens of microseconds each.
func parseStat(pid int, data []byte) (proc, error) {
	l := bytes.IndexByte(data, '(')
	r := bytes.LastIndexByte(data, ')')
	if l < 0 || r < l || r+2 > len(data) {
		return proc{}, fmt.Errorf("parsing /proc/%d/stat: no (comm) in %q", pid, data)
	}
	p := proc{pid: pid, comm: string(data[l+1 : r])}
	// Fields after "comm) ": state(3) ppid(4) ... starttime(22).
	rest := data[r+2:]
	for field := 3; field <= 22; field++ {
		var tok []byte
		tok, rest = nextField(rest)
		if tok == nil {
			return proc{}, fmt.Errorf("parsing /proc/%d/stat: %w at field %d", pid, errShortStat, field)
		}
		switch field {
		case 3:
			p.state = tok[0]
		case 4:
			v, err := strconv.Atoi(string(tok))
			if err != nil {
				return proc{}, fmt.Errorf("parsing /proc/%d/stat ppid: %w", pid, err)
			}
			p.ppid = v
		case 22:
			v, err := strconv.ParseUint(string(tok), 10, 64)
			if err != nil {
				return proc{}, fmt.Errorf("parsing /proc/%d/stat starttime: %w", pid, err)
			}
			p.start = v
		}
	}
	return p, nil
}

var errShortStat = errors.New("too few fields")

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
