//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/protocol"
)

// cpusAllowed is the Cpus_allowed_list line of a /proc status file.
func cpusAllowed(t *testing.T, status string) string {
	t.Helper()
	b, err := os.ReadFile(status)
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "Cpus_allowed_list:") {
			return line
		}
	}
	t.Fatalf("no Cpus_allowed_list in %s", status)
	return ""
}

// TestEveryCPUComesBack: shellsup holds its threads on one CPU while it
// sets up (internal/affinity), and gives every CPU back before it forks
// bash or the PID-namespace init. bash, every thread of the init and every
// thread of shellsup have the CPU set shellsup was started with.
func TestEveryCPUComesBack(t *testing.T) {
	var all unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &all))
	if all.Count() < 2 {
		t.Skip("one CPU here: nothing is narrowed, so nothing can fail to come back")
	}
	want := cpusAllowed(t, "/proc/self/status")
	for _, pidns := range []bool{false, true} {
		t.Run(fmt.Sprintf("pidns=%v", pidns), func(t *testing.T) {
			var args []string
			if pidns {
				args = []string{"--pidns"}
			}
			var shellsupThreads []string
			r := runShellsup(t, opts{
				args: args, control: true,
				// $PPID: shellsup, or the namespace's init.
				command: `grep -h Cpus_allowed_list /proc/self/status /proc/$PPID/task/*/status; echo ready; exec sleep 30`,
				onFrame: onReady(func(r *running) {
					tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", r.cmd.Process.Pid))
					require.NoError(t, err)
					for _, s := range tasks {
						shellsupThreads = append(shellsupThreads, cpusAllowed(t, s))
					}
					_ = r.send(&protocol.Cancel{})
				}),
			})
			tot := requireTotals(t, r)
			lines := strings.Split(strings.TrimSpace(tot.Stdout), "\n")
			require.Greater(t, len(lines), 2, "bash's line, then its parent's threads, then ready")
			for _, l := range lines[:len(lines)-1] {
				assert.Equal(t, want, l, "bash and its parent's threads")
			}
			require.NotEmpty(t, shellsupThreads)
			for _, l := range shellsupThreads {
				assert.Equal(t, want, l, "every thread of shellsup")
			}
		})
	}
}
