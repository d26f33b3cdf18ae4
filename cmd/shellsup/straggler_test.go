//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// TestStragglerReported: a process that cannot be killed is reported, and
// shellsup still returns within its deadline with exit 125. A process in a
// frozen cgroup v1 freezer sits in D state and does not die of SIGKILL
// until thawed — the closest thing to a process stuck on a dead NFS server
// that a test can make on purpose.
func TestStragglerReported(t *testing.T) {
	freezer := "/sys/fs/cgroup/freezer"
	if _, err := os.Stat(filepath.Join(freezer, "freezer.state")); err != nil {
		if _, err := os.Stat(freezer); err != nil {
			t.Skipf("needs the cgroup v1 freezer at %s to make an unkillable process: %v", freezer, err)
		}
	}
	dir := filepath.Join(freezer, fmt.Sprintf("shellsup-test-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("needs a writable cgroup v1 freezer (root) to make an unkillable process: %v", err)
	}
	tok := reapertest.NewToken()
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(dir, "freezer.state"), []byte("THAWED"), 0) // let the straggler die
		reapertest.Kill(tok)
		reapertest.ReapOrphans()
		for deadline := time.Now().Add(5 * time.Second); os.Remove(dir) != nil && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	})
	command := fmt.Sprintf(`sleep 300 & echo $! > %[1]s/cgroup.procs && echo FROZEN > %[1]s/freezer.state
while ! grep -q FROZEN %[1]s/freezer.state; do sleep 0.01; done; echo ready`, dir)
	r := runShellsup(t, opts{args: []string{"--grace", "0.2"}, command: command, env: []string{tok.Env()}, noLeakCheck: true})
	require.NoError(t, r.decErr)
	require.NotNil(t, r.totals, "frames %v, stderr %q", r.frameTypes(), r.stderr)
	tot := r.totals
	assert.Contains(t, tot.Stdout, "ready")
	assert.Equal(t, 125, r.exit, "a straggler is a containment failure")
	stragglers := tot.Cleanup.Stragglers
	if proctest.Tier() == "pidns" {
		// The namespace's init cannot finish dying while a process of
		// its namespace is in D state: it is reported too.
		stragglers = slices.DeleteFunc(slices.Clone(stragglers), func(s protocol.Straggler) bool { return s.Comm == "shellsup-init" })
	}
	require.Len(t, stragglers, 1, "%+v", tot.Cleanup)
	st := stragglers[0]
	assert.Equal(t, "sleep", st.Comm)
	assert.Equal(t, "D", st.State)
	assert.True(t, strings.Contains(st.Reason, "D state"), st.Reason)
	assert.Less(t, time.Duration(tot.Cleanup.Ms)*time.Millisecond, 200*time.Millisecond+3*time.Second+500*time.Millisecond,
		"the cleanup must end at its deadline")
	assert.True(t, tot.Cleanup.DrainTimedOut, "the frozen sleep still holds the output pipes")
	assert.Equal(t, 0, *tot.ExitCode, "bash itself exited normally")
	assert.Equal(t, protocol.StatusFailed, tot.Status, "shellsup cannot stand behind a run it did not clean up")
}
