package shellsup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func init() {
	helpers.Register("v1-harness", v1Harness)
}

// v1Command leaves a setsid sleeper (its pid in $LOG) and SIGKILLs
// shellsup: nothing but the binding can clean up after that.
const v1Command = `setsid sleep 61.73 & echo $! > "$LOG"; kill -9 $PPID`

// v1Harness runs v1Command with MaxProcs and prints Run's error.
func v1Harness([]string) int {
	// NoPIDNamespace: the default --pidns-auto would put this run (no v2 leaf) in a PID
	// namespace, where the command cannot kill shellsup at all; the sweep is for the tier alone.
	_, err := Run(context.Background(), Request{Command: v1Command, MaxProcs: 20, Timeout: 20 * time.Second, NoPIDNamespace: true})
	var e *Error
	if errors.As(err, &e) {
		fmt.Printf("%s: %s\n", e.Category, e.Message)
		return 0
	}
	fmt.Printf("no protocol error: %v\n", err)
	return 1
}

// TestV1TierKilledShellsupLeavesNothing is the review's finding 6
// (2026-12-02): in the cgroup-v1 tier (limits only: a harness with a
// delegated v1 pids cgroup and no writable v2 directory) the start frame
// names no v2 leaf, and Run neither killed the v1 leaf nor swept after a
// SIGKILLed shellsup: the command's setsid sleeper outlived Run. Run now
// sweeps, which kills the v1 leaf through pidfds of verified members.
func TestV1TierKilledShellsupLeavesNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to delegate a v1 pids cgroup to nobody")
	}
	pids := "/sys/fs/cgroup/pids"
	if _, err := os.Stat(filepath.Join(pids, "tasks")); err != nil {
		t.Skip("needs a cgroup v1 pids hierarchy at " + pids)
	}
	deleg := filepath.Join(pids, fmt.Sprintf("shellsup-test-v1tier-%d", os.Getpid()))
	require.NoError(t, os.Mkdir(deleg, 0o755))
	t.Cleanup(func() { removeV1(deleg) })
	for _, f := range []string{deleg, deleg + "/cgroup.procs", deleg + "/tasks"} {
		require.NoError(t, os.Chown(f, 65534, 65534))
	}
	dir := nobodyDir(t)
	require.NoError(t, os.Chmod(dir, 0o777))
	log := filepath.Join(dir, "log")
	require.NoError(t, os.WriteFile(log, nil, 0o666))
	require.NoError(t, os.Chmod(log, 0o666))
	bin := copyExecutable(t, os.Getenv(BinaryEnv), filepath.Join(dir, "shellsup"))
	self := copyExecutable(t, os.Args[0], filepath.Join(dir, "harness.test"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", `echo $$ > "$1/cgroup.procs" && exec setpriv --reuid=65534 --regid=65534 --clear-groups "$2"`, "sh", deleg, self)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", BinaryEnv + "=" + bin, "LOG=" + log, helpers.Env("v1-harness")}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the harness: %s", out)
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	sleeper, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err, "the command wrote its sleeper's pid: %q (harness: %s)", b, out)
	t.Cleanup(func() { killIfSleeper(sleeper) })
	reapOrphansAfter(t) // the killed sleeper was reparented to the test binary
	got := string(out)
	assert.Contains(t, got, "protocol: ", "a SIGKILLed shellsup is an error, never a result")
	// The sweep may also meet other users' stale leaves in the v2 cgroup (and fail on them).
	// shellsup may die before or after its start frame: either way Run sweeps.
	assert.Regexp(t, `(the cgroup-v1 tier's leaves are not named in the start frame|no start frame arrived, so what it started is unknown); Run ran \S*shellsup sweep.*killed [1-9][0-9]* processes in `+regexp.QuoteMeta(deleg)+`/shellsup-\S+ and removed it`, got, "Run swept the v1 leaf")
	assert.False(t, isSleeper(sleeper), "the setsid sleeper (pid %d) is gone when Run returns: %s", sleeper, got)
}

// isSleeper says whether pid is v1Command's sleeper.
func isSleeper(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && strings.Contains(string(b), "61.73")
}

// killIfSleeper kills pid if it is still the test's sleeper.
func killIfSleeper(pid int) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	if isSleeper(pid) {
		_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	}
}

// removeV1 removes the delegated v1 cgroup and any leaf left in it (its
// processes killed first, each checked to be the test's sleeper).
func removeV1(deleg string) {
	leaves, _ := filepath.Glob(filepath.Join(deleg, "shellsup-*"))
	for _, l := range append(leaves, deleg) {
		b, _ := os.ReadFile(filepath.Join(l, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(f); err == nil {
				killIfSleeper(p)
			}
		}
		deadline := time.Now().Add(2 * time.Second)
		for os.Remove(l) != nil && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // no event for "v1 cgroup empty"
		}
	}
}
