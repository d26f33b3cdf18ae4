//go:build linux

package main

import (
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/shellsup/shellsup/internal/proctest"
)

// zombieLeader is a Python program whose main thread exits on its own
// (the exit system call, not exit_group) while another thread, ignoring
// SIGTERM, lives on for 60 s: the leader shows "Z" in /proc, yet the
// process is alive — a common server pattern (pthread_exit in main).
const zombieLeader = `python3 -c '
import ctypes, os, platform, signal, threading, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
threading.Thread(target=lambda: (time.sleep(60), os._exit(0))).start()
time.sleep(0.1)
print("leader exits", flush=True)
ctypes.CDLL(None).syscall({"x86_64": 60, "aarch64": 93}[platform.machine()], 0)
'`

func needZombieLeader(t *testing.T) {
	t.Helper()
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("the exit system call's number is known here for amd64 and arm64 only")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3")
	}
}

// TestZombieLeaderIsNotAnExit: bash execs the program, so bash's pid is
// the zombie leader of a live process. The run is still going when the
// timeout fires: timed out, not an exit (under --pidns the init's report
// and /proc used to disagree: a "Z" leader was taken for bash's exit).
func TestZombieLeaderIsNotAnExit(t *testing.T) {
	needZombieLeader(t)
	r := runShellsup(t, opts{args: []string{"--timeout", "1.5", "--grace", "0.3"}, command: zombieLeader})
	tot := requireTotals(t, r)
	assert.Contains(t, tot.Stdout, "leader exits")
	assert.True(t, tot.TimedOut, "trigger %s, exit code %v", tot.Cleanup.Trigger, tot.ExitCode)
	assert.Equal(t, "timeout", tot.Cleanup.Trigger)
	assert.Equal(t, 124, r.exit)
	assert.Empty(t, tot.Cleanup.Stragglers)
}

// TestDeepZombieLeaderIsKilled: the same program as a deeper descendant
// (bash, ignoring SIGTERM, waits for it) in the subreaper tier: the /proc
// walk sees its leader as "Z" but must still stop and kill the process,
// whose threads are alive.
func TestDeepZombieLeaderIsKilled(t *testing.T) {
	needZombieLeader(t)
	r := runShellsup(t, opts{args: []string{"--no-cgroup", "--timeout", "1.5", "--grace", "0.3"}, command: "trap '' TERM; " + zombieLeader + " & wait; wait"})
	tot := requireTotals(t, r)
	assert.Contains(t, tot.Stdout, "leader exits")
	assert.True(t, tot.TimedOut)
	assert.Empty(t, tot.Cleanup.Stragglers, "the live process behind the zombie leader survived")
	if proctest.Tier() != "pidns" { // there the init's Kill takes the namespace: the counts are the init's
		assert.GreaterOrEqual(t, tot.Cleanup.Killed, 2, "bash and the program ignore SIGTERM")
	}
}

// TestZombieLeaderCleanupWithinGrace: a TERM-ignoring program whose leader
// thread exited, left behind when bash exits, is killed right after the
// grace in every tier. cgroup.kill does not kill such a process (the kernel
// skips it), and the cgroup tier used to wait a whole second for its leaf
// to empty before the /proc walk killed it: the cleanup took grace + 1 s.
func TestZombieLeaderCleanupWithinGrace(t *testing.T) {
	needZombieLeader(t)
	r := runShellsup(t, opts{args: []string{"--grace", "1"}, command: zombieLeader + " & sleep 0.5; echo bye"})
	tot := requireTotals(t, r)
	assert.Contains(t, tot.Stdout, "leader exits")
	assert.Equal(t, 0, r.exit)
	assert.Empty(t, tot.Cleanup.Stragglers)
	assert.Less(t, tot.Cleanup.Ms, int64(1600), "the cleanup took %d ms with --grace 1 (tier %s)", tot.Cleanup.Ms, tot.Cleanup.Tier)
}
