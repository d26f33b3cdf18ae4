package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeHost is a scratch tree of regular files standing in for a cgroup
// hierarchy: enough for the decisions (which controller where), not for
// kill, freeze or populated, which the real-cgroup tests cover.
func fakeHost(t *testing.T, files map[string]string) Host {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return Host{Proc: "/proc", Unified: root, Self: root, V1: map[string]string{}}
}

func TestLimitRefusedWithoutController(t *testing.T) {
	h := fakeHost(t, map[string]string{"cgroup.controllers": "cpu io\n", "cgroup.subtree_control": ""})
	_, err := Open(h, Options{MaxProcs: 64})
	var ue *UnavailableError
	require.True(t, errors.As(err, &ue), "%v", err)
	assert.Equal(t, "--max-procs 64", ue.What)
	assert.Contains(t, err.Error(), "the pids controller is not available")
	assert.Contains(t, err.Error(), "no cgroup v1 pids hierarchy is mounted")
	entries, _ := os.ReadDir(h.Self)
	assert.Len(t, entries, 2, "nothing left behind")

	_, err = Open(h, Options{MaxMemory: 64 << 20})
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), "the memory controller is not available")
}

func TestLimitRefusedWhenV1LeafCannotBeMade(t *testing.T) {
	h := fakeHost(t, map[string]string{"cgroup.controllers": ""})
	h.V1["pids"] = filepath.Join(h.Self, "no-such-hierarchy")
	_, err := Open(h, Options{MaxProcs: 8})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot create a cgroup v1 pids leaf in "+h.V1["pids"])
}

func TestNoLeafWithoutCgroup2(t *testing.T) {
	h := fakeHost(t, nil)
	h.Unified = ""
	_, err := Open(h, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no cgroup2 filesystem is mounted")
}

func TestEnableControllerDecisions(t *testing.T) {
	h := fakeHost(t, map[string]string{"cgroup.controllers": "pids memory\n", "cgroup.subtree_control": "pids\n"})
	assert.NoError(t, enableController(h.Self, "pids"), "already enabled")
	require.NoError(t, enableController(h.Self, "memory"), "available: enabled now")
	b, err := os.ReadFile(filepath.Join(h.Self, "cgroup.subtree_control"))
	require.NoError(t, err)
	assert.Equal(t, "+memory", string(b))
	err = enableController(h.Self, "hugetlb")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not in cgroup.controllers")

	// A cgroup with processes refuses (EBUSY on a real host; a directory
	// in place of the file here): the error says what to do.
	h2 := fakeHost(t, map[string]string{"cgroup.controllers": "pids\n", "cgroup.subtree_control/x": ""})
	err = enableController(h2.Self, "pids")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--cgroup")
}
