//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// TestEveryTerminatingSignalCancels: signals whose default action would end
// shellsup (SIGQUIT would also make the Go runtime dump its goroutines)
// cancel the run instead; the tree is cleaned up and totals come last.
func TestEveryTerminatingSignalCancels(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGXCPU,
		syscall.SIGALRM, syscall.SIGTRAP, syscall.SIGSYS, syscall.SIGABRT, syscall.SIGSEGV, syscall.Signal(35), syscall.Signal(64)} {
		t.Run(strings.ReplaceAll(sig.String(), " ", "-"), func(t *testing.T) {
			r := runShellsup(t, opts{
				args: []string{"--timeout", "30"}, command: busyCommand, control: true,
				onFrame: onReady(func(r *running) { r.signal(sig) }),
			})
			tot := requireTotals(t, r)
			assert.True(t, tot.Cancelled)
			assert.Equal(t, protocol.ReasonSignal, tot.CancelReason)
			assert.Equal(t, 128+int(sig), r.exit, "a cancel by signal N exits 128+N")
			assert.NotContains(t, r.stderr, "goroutine", "no runtime dump")
			assert.Contains(t, r.frameTypes(), "cancel")
		})
	}
}

// commandSignals are the numbers of the signals TestCommandSignalsShellsup
// sends by name (glibc's SIGRTMIN is 34).
var commandSignals = map[string]int{"QUIT": 3, "USR1": 10, "XCPU": 24, "RTMIN+1": 35, "VTALRM": 26, "PWR": 30}

// TestCommandSignalsShellsup: the same signals sent by the command itself
// to $PPID.
func TestCommandSignalsShellsup(t *testing.T) {
	skipInPidnsTier(t)
	for _, sig := range []string{"QUIT", "USR1", "XCPU", "RTMIN+1", "VTALRM", "PWR"} {
		t.Run(sig, func(t *testing.T) {
			r := runShellsup(t, opts{args: []string{"--timeout", "30"}, command: "setsid sleep 300 & sleep 300 & kill -" + sig + " $PPID; sleep 300"})
			tot := requireTotals(t, r)
			assert.True(t, tot.Cancelled)
			assert.Equal(t, protocol.ReasonSignal, tot.CancelReason)
			assert.Equal(t, 128+commandSignals[sig], r.exit, "a cancel by signal N exits 128+N")
		})
	}
}

// TestReservedSignalsAreIgnored: the runtime reserves real-time signals 32
// to 34 (34 is glibc's SIGRTMIN) and cannot catch them; shellsup ignores
// them once bash is running, so they no longer end it with no cleanup. bash
// still got them at their default action.
func TestReservedSignalsAreIgnored(t *testing.T) {
	r := runShellsup(t, opts{command: "grep ^SigIgn: /proc/$$/status; setsid sleep 300 & " +
		"for s in 32 33 34; do kill -$s $PPID || exit 9; done; sleep 0.2; echo survived"})
	tot := requireTotals(t, r)
	assert.False(t, tot.Cancelled)
	assert.Equal(t, ptr(0), tot.ExitCode, "stderr %q", tot.Stderr)
	assert.Contains(t, tot.Stdout, "survived")
	assert.Equal(t, 0, r.exit)
}

// TestReservedSignalStateOfBash: bash gets SIG_DFL for 32 to 34 (shellsup
// ignores them only after the spawn), even from a hostile start.
func TestReservedSignalStateOfBash(t *testing.T) {
	out := runHostile(t, "exec grep -E '^SigIgn:' /proc/self/status")
	assert.Contains(t, out, "SigIgn:\t0000000000000000")
}

// floodCommand starts four flooders that each send shellsup count signals
// of the given kinds (bounded: the loops end by themselves), then waits
// for them.
func floodCommand(sigs string, count int) string {
	return "setsid sleep 300 & flood() { for ((i = 0; i < " + strconv.Itoa(count) + "; i++)); do for s in " + sigs +
		"; do kill -$s $PPID 2>/dev/null || return; done; done; }; " +
		"pids=(); for n in 1 2 3 4; do flood & pids+=($!); done; wait \"${pids[@]}\"; echo flooded"
}

// TestFloodOfHarmlessSignals: a flood of signals that do nothing to
// shellsup (those with a do-nothing default, the reserved ones it ignores,
// the runtime's own preemption signal) does not stall the run: the command
// ends, and so does the run, cleanly.
func TestFloodOfHarmlessSignals(t *testing.T) {
	r := runShellsup(t, opts{command: floodCommand("URG WINCH CONT CHLD 34 32", 3000)})
	tot := requireTotals(t, r)
	assert.False(t, tot.Cancelled)
	assert.Equal(t, ptr(0), tot.ExitCode, "stderr %q", tot.Stderr)
	assert.Contains(t, tot.Stdout, "flooded")
}

// TestFloodOfCancellingSignals: a flood of terminating signals cancels once
// (first cause wins) and the cleanup finishes against flooders that keep
// sending until they are killed.
func TestFloodOfCancellingSignals(t *testing.T) {
	skipInPidnsTier(t)
	r := runShellsup(t, opts{command: floodCommand("USR1 QUIT TERM 40", 100000)})
	tot := requireTotals(t, r)
	assert.True(t, tot.Cancelled)
	assert.Equal(t, protocol.ReasonSignal, tot.CancelReason)
	assert.Contains(t, []int{128 + 10, 128 + 3, 128 + 15, 128 + 40}, r.exit, "128+N of the signal that came first")
	n := 0
	for _, ty := range r.frameTypes() {
		if ty == "cancel" {
			n++
		}
	}
	assert.Equal(t, 1, n, "one cancel frame: %v", r.frameTypes())
}

// TestCPULimitLoweredByTheCommand: the command lowers shellsup's soft
// RLIMIT_CPU to 1 s and makes it work (a stream of output to drain).
// SIGXCPU at the soft limit cancels the run and the cleanup finishes, long
// before the hard limit's SIGKILL.
func TestCPULimitLoweredByTheCommand(t *testing.T) {
	skipInPidnsTier(t)
	tok := reapertest.NewToken()
	cmd := exec.Command(shellsupBin, "--timeout", "60", "--",
		"setsid sleep 300 & prlimit --pid $PPID --cpu=1:120 || exit 9; exec head -c 1T /dev/zero")
	cmd.Env = baseEnv(tok)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr // stdout: /dev/null, drained by shellsup at full speed
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr %q", stderr.String())
	ws := ee.Sys().(syscall.WaitStatus)
	require.False(t, ws.Signaled(), "shellsup died of %v; stderr %q", ws.Signal(), stderr.String())
	assert.Equal(t, 128+int(syscall.SIGXCPU), ws.ExitStatus(), "stderr %q", stderr.String())
	assert.Contains(t, stderr.String(), "cancelled by SIGXCPU")
	reapertest.Check(t, tok)
}

func ptr[T any](v T) *T { return &v }

// TestCtrlBackslashAtATerminal: shellsup runs in human mode on a terminal
// of its own (its controlling tty, in the foreground); typing Ctrl-\ sends
// SIGQUIT to it, which cancels and cleans up like Ctrl-C instead of making
// the Go runtime dump its goroutines.
func TestCtrlBackslashAtATerminal(t *testing.T) {
	master, slave := openPty(t)
	tok := reapertest.NewToken()
	cmd := exec.Command(shellsupBin, "--timeout", "30", "--", busyCommand)
	cmd.Env = baseEnv(tok)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	require.NoError(t, cmd.Start())
	slave.Close() // shellsup has it
	var mu sync.Mutex
	var screen bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return // EIO once shellsup and its tty are gone
			}
		}
	}()
	seen := func(s string) bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(screen.String(), s)
	}
	for deadline := time.Now().Add(30 * time.Second); !seen("ready") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	require.True(t, seen("ready"), "the command should have started")
	_, err := master.Write([]byte{0x1c}) // Ctrl-\
	require.NoError(t, err)
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	ws := ee.Sys().(syscall.WaitStatus)
	require.False(t, ws.Signaled(), "shellsup died of %v", ws.Signal())
	assert.Equal(t, 128+int(syscall.SIGQUIT), ws.ExitStatus())
	for deadline := time.Now().Add(5 * time.Second); !seen("cancelled by SIGQUIT") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	out := screen.String()
	mu.Unlock()
	assert.Contains(t, out, "cancelled by SIGQUIT")
	assert.NotContains(t, out, "goroutine")
	reapertest.Check(t, tok)
}

// openPty opens a new pseudo-terminal pair.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0), "unlockpt")
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	require.NoError(t, err, "ptsname")
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return m, s
}
