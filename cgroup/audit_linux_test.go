package cgroup

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// outside compares a process's /proc/PID/cgroup with the leaf's path as
// shellsup's own /proc/self/cgroup places it.
func TestOutside(t *testing.T) {
	ours := []byte("8:pids:/svc\n4:memory:/svc\n0::/svc\n")
	for _, tc := range []struct {
		name, theirs, controller, home, leaf, at string
		out                                      bool
	}{
		{"v2 in the leaf", "0::/svc/shellsup-1\n", "", "/u/svc", "/u/svc/shellsup-1", "", false},
		{"v2 below the leaf", "0::/svc/shellsup-1/w1/d\n", "", "/u/svc", "/u/svc/shellsup-1", "", false},
		{"v2 root", "0::/\n", "", "/u/svc", "/u/svc/shellsup-1", "/", true},
		{"v2 a sibling of the same prefix", "0::/svc/shellsup-10\n", "", "/u/svc", "/u/svc/shellsup-1", "/svc/shellsup-10", true},
		{"v2 delegated parent", "0::/deleg\n", "", "/u/svc", "/u/deleg/shellsup-1", "/deleg", true},
		{"v2 under --cgroup", "0::/deleg/shellsup-1\n", "", "/u/svc", "/u/deleg/shellsup-1", "", false},
		{"v1 pids root", "8:pids:/\n0::/svc/shellsup-1\n", "pids", "/p/svc", "/p/svc/shellsup-1", "/", true},
		{"v1 pids in the leaf", "8:pids:/svc/shellsup-1\n", "pids", "/p/svc", "/p/svc/shellsup-1", "", false},
		{"v1 no line", "0::/\n", "memory", "/m/svc", "/m/svc/shellsup-1", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at, out := outside(ours, []byte(tc.theirs), tc.controller, tc.home, tc.leaf)
			assert.Equal(t, tc.out, out)
			assert.Equal(t, tc.at, at)
		})
	}
}

func TestLeftListBounded(t *testing.T) {
	var l leftList
	for pid := 1; pid <= maxLeft+3; pid++ {
		l.add(pid, "/")
		l.add(pid, "/") // once per pid
	}
	n := l.notes()
	assert.Len(t, n, maxLeft+1)
	assert.Equal(t, "left the leaf: pid 1 now in /", n[0])
	assert.Equal(t, "left the leaf: 3 more processes", n[maxLeft])
}
