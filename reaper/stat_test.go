//go:build linux

package reaper

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/prometheus/procfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statLine builds a /proc/PID/stat line with the given comm, state, ppid
// and start time; the other fields are filler.
func statLine(pid int, comm string, state byte, ppid int, start uint64) string {
	return fmt.Sprintf("%d (%s) %c %d 1 1 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 %d 1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		pid, comm, state, ppid, start)
}

func TestParseStat(t *testing.T) {
	rows := []struct {
		name string
		comm string
	}{
		{"plain", "sleep"},
		{"space", "my prog"},
		{"parentheses", "a) (b"},
		{"closing paren last", "x)"},
		{"only parens", ")()("},
		{"spaces and parens", ") S 1 2 3 ("},
		{"empty", ""},
		{"newline", "a\nb"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			p, err := parseStat(42, []byte(statLine(42, row.comm, 'S', 7, 123456)))
			require.NoError(t, err)
			assert.Equal(t, proc{pid: 42, ppid: 7, start: 123456, state: 'S', comm: row.comm}, p)
		})
	}
}

func TestParseStatHostile(t *testing.T) {
	for name, in := range map[string]string{
		"empty":             "",
		"no parens":         "42 sleep S 1",
		"only open paren":   "42 (sleep S 1",
		"truncated":         "42 (sleep) S 1 2 3",
		"ppid not a number": "42 (sleep) S x 1 1 0 -1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 5",
		"start not number":  "42 (sleep) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 0 0 0 0 x",
		"paren at the end":  "42 (sleep)",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseStat(42, []byte(in))
			assert.Error(t, err)
		})
	}
}

// TestParseStatMatchesProcfs checks the hand-written parser against
// prometheus/procfs on every process of this machine.
func TestParseStatMatchesProcfs(t *testing.T) {
	fs, err := procfs.NewFS("/proc")
	require.NoError(t, err)
	all, err := fs.AllProcs()
	require.NoError(t, err)
	d := procDir{root: "/proc"}
	checked := 0
	for _, p := range all {
		want, err := p.Stat()
		if err != nil {
			continue // exited meanwhile
		}
		got, err := d.stat(p.PID)
		if err != nil {
			continue
		}
		if got.start != want.Starttime {
			continue // the pid was reused between the two reads
		}
		assert.Equal(t, want.PPID, got.ppid, "pid %d", p.PID)
		assert.Equal(t, want.Comm, got.comm, "pid %d", p.PID)
		if want.State == "T" || want.State == "Z" {
			// Running processes move between R, S and D between the two
			// reads; stopped and dead ones stay put.
			assert.Equal(t, want.State, string(got.state), "pid %d", p.PID)
		}
		checked++
	}
	assert.Greater(t, checked, 10)
}

// fakeProc writes a fake /proc with the given processes.
func fakeProc(t *testing.T, procs ...proc) string {
	root := t.TempDir()
	for _, p := range procs {
		dir := filepath.Join(root, strconv.Itoa(p.pid))
		require.NoError(t, os.Mkdir(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(statLine(p.pid, p.comm, p.state, p.ppid, p.start)), 0o644))
	}
	require.NoError(t, os.Mkdir(filepath.Join(root, "self"), 0o755)) // non-numeric entries are skipped
	return root
}

func TestDescendants(t *testing.T) {
	root := fakeProc(t,
		proc{pid: 1, ppid: 0, comm: "init", state: 'S', start: 1},
		proc{pid: 100, ppid: 1, comm: "shellsup", state: 'S', start: 10},
		proc{pid: 101, ppid: 100, comm: "bash", state: 'S', start: 11},
		proc{pid: 102, ppid: 101, comm: "sleep (x)", state: 'S', start: 12},
		proc{pid: 103, ppid: 100, comm: "orphan", state: 'T', start: 13},
		proc{pid: 104, ppid: 103, comm: "zombie", state: 'Z', start: 14},
		proc{pid: 200, ppid: 1, comm: "stranger", state: 'S', start: 20},
		proc{pid: 201, ppid: 200, comm: "stranger child", state: 'S', start: 21},
		proc{pid: 300, ppid: 301, comm: "cycle a", state: 'S', start: 30},
		proc{pid: 301, ppid: 300, comm: "cycle b", state: 'S', start: 31},
	)
	d := procDir{root: root}
	got, err := d.descendants(100)
	require.NoError(t, err)
	var pids []int
	pos := map[int]int{}
	for i, p := range got {
		pids = append(pids, p.pid)
		pos[p.pid] = i
	}
	assert.ElementsMatch(t, []int{101, 103, 102, 104}, pids, "strangers and cycles excluded")
	for _, p := range got {
		if p.ppid != 100 {
			assert.Less(t, pos[p.ppid], pos[p.pid], "parent %d before child %d", p.ppid, p.pid)
		}
	}
}

func TestCheckProcfsRefuses(t *testing.T) {
	for name, root := range map[string]string{
		"missing":   "/no/such/proc",
		"not proc":  "/sys",
		"empty dir": t.TempDir(),
		"fake proc": fakeProc(t, proc{pid: os.Getpid(), ppid: os.Getppid(), comm: "me", state: 'R', start: 1}),
	} {
		t.Run(name, func(t *testing.T) {
			err := checkProcfs(root)
			var ue *UnavailableError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, err.Error(), root)
		})
	}
	assert.NoError(t, checkProcfs("/proc"))
}
