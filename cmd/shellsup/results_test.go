//go:build linux

package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
	"github.com/shellsup/shellsup/request"
)

func TestExitCodes(t *testing.T) {
	rows := []struct {
		name    string
		command string
		code    int
		signal  string
	}{
		{"exit 0", "exit 0", 0, ""},
		{"exit 1", "exit 1", 1, ""},
		{"exit 3", "exit 3", 3, ""},
		{"exit 126", "exit 126", 126, ""},
		{"command not found", "no-such-command-shellsup", 127, ""},
		{"exit 255", "exit 255", 255, ""},
		{"killed by SIGTERM", "kill -TERM $$", 143, "SIGTERM"},
		{"killed by SIGKILL", "kill -9 $$", 137, "SIGKILL"},
		{"killed by SIGSEGV", "kill -SEGV $$", 139, "SIGSEGV"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			r := runShellsup(t, opts{command: row.command})
			tot := requireTotals(t, r)
			require.NotNil(t, tot.ExitCode)
			assert.Equal(t, row.code, *tot.ExitCode)
			assert.Equal(t, row.code, r.exit, "shellsup's own exit code")
			if row.signal == "" {
				assert.Nil(t, tot.Signal)
			} else {
				require.NotNil(t, tot.Signal)
				assert.Equal(t, row.signal, *tot.Signal)
			}
			assert.False(t, tot.TimedOut || tot.Cancelled)
		})
	}
}

func TestStartFrame(t *testing.T) {
	dir := t.TempDir()
	r := runShellsup(t, opts{args: []string{"--cwd", dir, "--timeout", "7.5", "--budget", "1000"}, command: "pwd; echo $PWD"})
	tot := requireTotals(t, r)
	require.NotNil(t, r.start)
	assert.Equal(t, r.frames[0], r.start, "start comes first")
	assert.Equal(t, protocol.Version, r.start.Version)
	assert.Equal(t, dir, r.start.Cwd)
	assert.Equal(t, 7.5, r.start.Timeout)
	assert.Equal(t, 1000, r.start.Budget)
	assert.Equal(t, defaultContainment(), r.start.Containment)
	assert.Equal(t, "pwd; echo $PWD", r.start.Command)
	assert.NotZero(t, r.start.ChildPid)
	assert.Equal(t, dir+"\n"+dir+"\n", tot.Stdout)
	assert.Equal(t, dir, tot.Cwd)
}

func TestTimeoutWinsOverLaterExit(t *testing.T) {
	// A TERM handler that exits 0: the run still timed out.
	r := runShellsup(t, opts{args: []string{"--timeout", "0.3"}, command: "trap 'exit 0' TERM; echo ready; sleep 300 & wait"})
	tot := requireTotals(t, r)
	assert.True(t, tot.TimedOut)
	assert.False(t, tot.Cancelled)
	assert.Equal(t, 0, *tot.ExitCode)
	assert.Equal(t, 124, r.exit)
	assert.Equal(t, []string{"timeout", "totals"}, lastTwoControl(r))
}

// TestTermIgnorerKilledAtGrace: a process that ignores SIGTERM lives until
// the grace ends, and no longer.
func TestTermIgnorerKilledAtGrace(t *testing.T) {
	r := runShellsup(t, opts{args: []string{"--timeout", "0.2", "--grace", "1.5"}, command: "trap '' TERM HUP INT; echo ready; while :; do sleep 1; done"})
	tot := requireTotals(t, r)
	assert.True(t, tot.TimedOut)
	ms := time.Duration(tot.Cleanup.Ms) * time.Millisecond
	assert.GreaterOrEqual(t, ms, 1500*time.Millisecond, "killed before the grace ended")
	// The documented bound: grace + the 3 s kill budget (a loaded 2-CPU
	// machine can take seconds to schedule the kill of a tree).
	assert.Less(t, ms, 1500*time.Millisecond+3*time.Second, "not killed within grace + kill budget")
	assert.GreaterOrEqual(t, tot.Cleanup.Killed, 1)
	assert.Equal(t, "SIGKILL", *tot.Signal)
}

// TestKilledCountsEachProcessOnce: bash and two deeper sleeps, all
// ignoring SIGTERM, are three processes killed, whichever tier killed them
// (cgroup.kill, then the /proc walk finding them dead, used to count the
// deeper ones twice). A zombie the walk finds is neither: in the second
// command only the exec'd sleep is alive at the end (its child, a zombie
// it never reaps, exited long before).
func TestKilledCountsEachProcessOnce(t *testing.T) {
	if proctest.Tier() == "pidns" {
		t.Skip("under --pidns the init reaps its namespace: the counts are the init's (see the README)")
	}
	for _, c := range []struct {
		command string
		want    int
	}{
		{"trap '' TERM; sleep 300 & sleep 300 & echo ready; wait", 3},
		{"(trap '' TERM; sleep 0.05 & exec sleep 300) & sleep 0.5; echo ready; exit 0", 1},
	} {
		for i := 0; i < 2; i++ {
			r := runShellsup(t, opts{args: []string{"--timeout", "1.5", "--grace", "0.2"}, command: c.command})
			tot := requireTotals(t, r)
			require.Contains(t, tot.Stdout, "ready", "the command was not set up in time")
			assert.Equal(t, c.want, tot.Cleanup.Killed, "%q, tier %s", c.command, tot.Cleanup.Tier)
			assert.Equal(t, c.want, tot.Cleanup.Signalled, "%q, tier %s", c.command, tot.Cleanup.Tier)
		}
	}
}

// TestTermHonouredQuickly: a tree that exits on SIGTERM ends the cleanup at
// once, not at the grace.
func TestTermHonouredQuickly(t *testing.T) {
	r := runShellsup(t, opts{args: []string{"--timeout", "0.2", "--grace", "20"}, command: "setsid sleep 300 & sleep 300 & echo ready; sleep 300"})
	tot := requireTotals(t, r)
	assert.Less(t, time.Duration(tot.Cleanup.Ms)*time.Millisecond, 5*time.Second)
	assert.Zero(t, tot.Cleanup.Killed)
}

func TestCancelRaceOneCause(t *testing.T) {
	// A cancel sent just as the timeout fires: exactly one cause, and the
	// command's later side effect never happens.
	for i := 0; i < 10; i++ {
		marker := filepath.Join(t.TempDir(), "marker")
		r := runShellsup(t, opts{
			args: []string{"--timeout", "0.05"}, control: true,
			command: "sleep 0.3; touch " + marker,
			onFrame: func(r *running, f protocol.Frame) {
				if f.Type() == protocol.TypeStart {
					time.AfterFunc(time.Duration(40+i)*time.Millisecond, func() { _ = r.send(&protocol.Cancel{}) })
				}
			},
		})
		tot := requireTotals(t, r)
		assert.True(t, tot.TimedOut != tot.Cancelled, "exactly one cause: timedOut %v cancelled %v", tot.TimedOut, tot.Cancelled)
		// No wait needed: with totals written, nothing of the tree is alive
		// (runShellsup's leak check proves it), so the touch can never run.
		assert.NoFileExists(t, marker)
	}
}

func TestCaptureThroughShellsup(t *testing.T) {
	t.Run("3 MiB stdout then 3 MiB stderr", func(t *testing.T) {
		r := runShellsup(t, opts{command: "head -c 3145728 /dev/zero | tr '\\0' O; head -c 3145728 /dev/zero | tr '\\0' E >&2"})
		tot := requireTotals(t, r)
		const marker = "\n... output truncated at 65536-byte capture limit ...\n"
		assert.True(t, tot.Truncated)
		assert.EqualValues(t, 6<<20, tot.TotalBytes)
		assert.EqualValues(t, 65536, tot.CapturedBytes)
		assert.Equal(t, tot.CapturedBytes, tot.ProgressBytes)
		assert.Equal(t, 1, strings.Count(tot.Stdout+tot.Stderr, "output truncated at"))
		assert.True(t, strings.HasSuffix(tot.Stdout, marker))
		assert.Empty(t, tot.Stderr)
		joined := map[string]string{}
		for _, f := range r.frames {
			if p, ok := f.(*protocol.Progress); ok {
				joined[p.Stream] += p.Text
			}
		}
		assert.Equal(t, tot.Stdout, joined["stdout"])
		assert.Equal(t, tot.Stderr, joined["stderr"])
	})
	t.Run("stderr overflows first with a small budget", func(t *testing.T) {
		r := runShellsup(t, opts{args: []string{"--budget", "100"}, command: "head -c 500 /dev/zero | tr '\\0' E >&2; sleep 0.1; echo late"})
		tot := requireTotals(t, r)
		assert.True(t, tot.Truncated)
		assert.True(t, strings.HasSuffix(tot.Stderr, "\n... output truncated at 100-byte capture limit ...\n"), tot.Stderr)
		assert.Empty(t, tot.Stdout)
		assert.EqualValues(t, 100, tot.CapturedBytes)
		assert.EqualValues(t, 505, tot.TotalBytes)
	})
	t.Run("split UTF-8 and a lone FF", func(t *testing.T) {
		r := runShellsup(t, opts{command: `printf '\xe2'; sleep 0.03; printf '\x82'; sleep 0.03; printf '\xac'; printf '\xff' >&2`})
		tot := requireTotals(t, r)
		assert.Equal(t, "€", tot.Stdout)
		assert.Equal(t, "\ufffd", tot.Stderr)
		assert.EqualValues(t, 4, tot.TotalBytes)
		assert.EqualValues(t, 6, tot.CapturedBytes)
	})
}

func TestValidation(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	rows := []struct {
		name string
		args []string
		msg  string
	}{
		{"timeout 0", []string{"--timeout", "0"}, "timeout must be greater than 0 and at most 600 seconds (got 0)"},
		{"timeout -1", []string{"--timeout", "-1"}, "(got -1)"},
		{"timeout 601", []string{"--timeout", "601"}, "(got 601)"},
		{"timeout nan", []string{"--timeout", "nan"}, "(got nan)"},
		{"timeout inf", []string{"--timeout", "inf"}, "(got inf)"},
		{"timeout abc", []string{"--timeout", "abc"}, `(got "abc")`},
		{"missing cwd", []string{"--cwd", "/no/such/dir"}, `cwd "/no/such/dir" does not exist`},
		{"file as cwd", []string{"--cwd", file}, fmt.Sprintf("cwd %q is not a directory", file)},
		{"budget 0", []string{"--budget", "0"}, "(got 0)"},
		{"budget too big", []string{"--budget", "524289"}, "at most 524288"},
		{"grace -1", []string{"--grace", "-1"}, "grace must be at least 0 and at most 60 seconds (got -1)"},
		{"unknown option", []string{"--bogus"}, `unknown option "--bogus"`},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "spawned")
			r := runShellsup(t, opts{args: row.args, command: "touch " + marker})
			assertRefused(t, r, protocol.CategoryValidation, row.msg, marker)
		})
	}
	t.Run("empty command", func(t *testing.T) {
		r := runShellsup(t, opts{command: ""})
		assertRefused(t, r, protocol.CategoryValidation, `command must be a non-empty string (got "")`, "")
	})
	t.Run("human mode", func(t *testing.T) {
		marker := filepath.Join(t.TempDir(), "spawned")
		cmd := exec.Command(shellsupBin, "--timeout", "0", "--", "touch "+marker)
		out, err := cmd.CombinedOutput()
		assert.Equal(t, 125, cmd.ProcessState.ExitCode(), "%v", err)
		assert.Equal(t, "shellsup: timeout must be greater than 0 and at most 600 seconds (got 0)\n", string(out))
		assert.NoFileExists(t, marker)
	})
}

// assertRefused checks a run that must not happen: one error frame, exit
// 125, and the command's marker file never created.
func assertRefused(t *testing.T, r result, category, msg, marker string) {
	t.Helper()
	require.NoError(t, r.decErr)
	require.Len(t, r.frames, 1, "frames %v", r.frameTypes())
	require.NotNil(t, r.errf)
	assert.Equal(t, category, r.errf.Category)
	assert.Contains(t, r.errf.Message, msg)
	assert.Equal(t, 125, r.exit)
	if marker != "" {
		assert.NoFileExists(t, marker, "the command ran")
	}
}

func TestContainmentUnavailable(t *testing.T) {
	for name, root := range map[string]string{"empty dir": t.TempDir(), "not procfs": "/sys", "missing": "/no/proc"} {
		t.Run(name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "spawned")
			r := runShellsup(t, opts{bin: seamsBin, env: []string{"SHELLSUP_TEST_PROC_ROOT=" + root}, command: "touch " + marker})
			assertRefused(t, r, protocol.CategoryContainmentUnavailable, root, marker)
		})
	}
}

// TestLeakCheckSeesLeaks is the negative control: with containment
// switched off (test build only), the leak check must see what is left.
func TestLeakCheckSeesLeaks(t *testing.T) {
	tok := reapertest.NewToken()
	cmd := exec.Command(seamsBin, "--frames", "--", "setsid sleep 300 & sleep 300 & echo ready")
	cmd.Env = append(baseEnv(tok), "SHELLSUP_TEST_NO_CONTAINMENT=1")
	raw, err := cmd.Output()
	require.NoError(t, err)
	defer reapertest.Kill(tok)
	leaked := reapertest.Find(tok)
	assert.Len(t, leaked, 2, "the control should leave the two sleeps: %v", leaked)
	var f protocol.Frame
	dec := protocol.NewDecoder(bytes.NewReader(raw))
	var containment string
	for dec.Decode(&f) == nil {
		if s, ok := f.(*protocol.Start); ok {
			containment = s.Containment
		}
	}
	assert.Equal(t, "none", containment)
}

func TestControlFrames(t *testing.T) {
	rows := []struct {
		name   string
		send   []byte
		reason string // "" means the run is not cancelled
	}{
		{"garbage", []byte("\x00\x00\x00\x05hello"), protocol.ReasonProtocol},
		{"oversized", []byte{0x00, 0x20, 0x00, 0x00}, protocol.ReasonProtocol},
		{"array not map", frame([]byte{0x91, 0xa6, 'c', 'a', 'n', 'c', 'e', 'l'}), protocol.ReasonProtocol},
		{"unknown type", frame([]byte{0x81, 0xa4, 't', 'y', 'p', 'e', 0xa4, 'p', 'i', 'n', 'g'}), ""},
		{"cancel with unknown keys", frame([]byte{0x82, 0xa4, 't', 'y', 'p', 'e', 0xa6, 'c', 'a', 'n', 'c', 'e', 'l', 0xa1, 'x', 0x01}), protocol.ReasonRequest},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			r := runShellsup(t, opts{
				args: []string{"--timeout", "5"}, control: true,
				command: "sleep 300 & echo ready; sleep 0.5; echo finished",
				onFrame: onReady(func(r *running) { require.NoError(t, r.sendRaw(row.send)) }),
			})
			tot := requireTotals(t, r)
			assert.Equal(t, row.reason != "", tot.Cancelled)
			assert.Equal(t, row.reason, tot.CancelReason)
			if row.reason == "" {
				assert.Equal(t, 0, r.exit)
				assert.Contains(t, tot.Stdout, "finished")
			}
		})
	}
}

func frame(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

func TestNoControlChannelOnDevNull(t *testing.T) {
	// stdin /dev/null (runShellsup's default) is not a control channel:
	// its immediate EOF must not cancel.
	r := runShellsup(t, opts{command: "sleep 0.2; echo done"})
	tot := requireTotals(t, r)
	assert.False(t, tot.Cancelled)
	assert.Equal(t, "done\n", tot.Stdout)
}

func TestCommandAtTheArgumentLimit(t *testing.T) {
	command := ": " + strings.Repeat("x", request.MaxCommandBytes-len(": ; echo ok")) + "; echo ok"
	require.Len(t, command, request.MaxCommandBytes)
	r := runShellsup(t, opts{command: command})
	tot := requireTotals(t, r)
	assert.Equal(t, "ok\n", tot.Stdout)
	assert.Equal(t, command, tot.Command)
}

// TestTimeoutExitTieIsConsistent: bash's own exit and the deadline, a few ms apart.
// The first cause wins: a run that timed out was stopped (bash killed by
// the cleanup's SIGTERM), and a bash that exited 0 by itself did not time
// out. It used to say timedOut with exit code 0 about 1 run in 20, when bash
// exited between the timer's check and the cleanup's first signal.
func TestTimeoutExitTieIsConsistent(t *testing.T) {
	for i := 0; i < 30; i++ {
		command := fmt.Sprintf("sleep 0.19%d", i%10)
		r := runShellsup(t, opts{args: []string{"--timeout", "0.2"}, command: command})
		tot := requireTotals(t, r)
		require.NotNil(t, tot.ExitCode, "%s", command)
		if tot.TimedOut {
			assert.NotEqual(t, 0, *tot.ExitCode, "%s: timedOut, yet bash exited 0 by itself", command)
			assert.Equal(t, 124, r.exit)
		} else {
			assert.Equal(t, 0, *tot.ExitCode, "%s", command)
			assert.Equal(t, 0, r.exit)
		}
	}
}
