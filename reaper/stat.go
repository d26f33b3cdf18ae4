package reaper

import "github.com/shellsup/shellsup/internal/procstat"

// proc is what the cleanup needs to know of one process, from /proc/PID/stat.
type proc struct {
	pid   int
	ppid  int
	start uint64 // start time in clock ticks since boot: with pid, the process's identity
	state byte   // R, S, D, T, t, Z, X, ...
	comm  string
}

// parseStat parses the text of /proc/PID/stat with the one parser of that
// file, internal/procstat.
func parseStat(pid int, data []byte) (proc, error) {
	s, err := procstat.Parse(pid, data)
	if err != nil {
		return proc{}, err
	}
	return proc{pid: s.Pid, ppid: s.PPid, start: s.Start, state: s.State, comm: s.Comm}, nil
}
