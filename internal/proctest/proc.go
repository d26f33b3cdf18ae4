package proctest

import (
	"path/filepath"
	"strconv"

	"github.com/shellsup/shellsup/internal/procstat"
)

// Stat reads /proc/PID/stat.
func Stat(pid int) (procstat.Stat, error) { return procstat.Read("/proc", pid) }

// PPid is the parent of pid, or -1 if pid is gone.
func PPid(pid int) int {
	s, err := Stat(pid)
	if err != nil {
		return -1
	}
	return s.PPid
}

// Children lists the pids of parent's children in state (any state if
// state is 0), from a scan of /proc.
func Children(parent int, state byte) []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*") // the pattern is valid: no error
	for _, dir := range dirs {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil {
			continue
		}
		s, err := Stat(pid)
		if err != nil || s.PPid != parent || (state != 0 && s.State != state) {
			continue // gone meanwhile, or not one of them
		}
		out = append(out, pid)
	}
	return out
}
