//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// TestPidnsSameOutcome: with --pidns the command runs under the init of its
// own PID namespace, and every outcome is reported exactly as without it.
func TestPidnsSameOutcome(t *testing.T) {
	for _, command := range []string{
		"true",
		"echo out; echo err >&2; exit 3",
		"kill -TERM $$",
		"kill -KILL $$",
		"trap '' TERM; kill -TERM $$; exit 7",
		"sleep 300 & setsid sleep 300 & echo started; exit 5",
		"exit 300",
	} {
		t.Run(command, func(t *testing.T) {
			plain := runShellsup(t, opts{command: command})
			ns := runShellsup(t, opts{args: []string{"--pidns"}, command: command})
			p, n := requireTotals(t, plain), requireTotals(t, ns)
			assert.Equal(t, proctest.Containment(false), plain.start.Containment)
			assert.Equal(t, proctest.Containment(true), ns.start.Containment)
			require.NotNil(t, n.ExitCode)
			assert.Equal(t, *p.ExitCode, *n.ExitCode)
			assert.Equal(t, p.Signal, n.Signal)
			assert.Equal(t, p.Stdout, n.Stdout)
			assert.Equal(t, p.Stderr, n.Stderr)
			assert.Equal(t, plain.exit, ns.exit)
			assert.False(t, n.Cancelled || n.TimedOut)
		})
	}
}

// TestPidnsTimeoutAndCancel: the endings that go through the whole cleanup
// (TERM, grace, kill of the init) report as without --pidns.
func TestPidnsTimeoutAndCancel(t *testing.T) {
	r := runShellsup(t, opts{args: []string{"--pidns", "--timeout", "0.5", "--grace", "0.3"},
		command: "trap '' TERM; setsid sleep 300 & (trap '' TERM; sleep 300) & sleep 300"})
	tot := requireTotals(t, r)
	assert.True(t, tot.TimedOut)
	assert.Equal(t, 124, r.exit)
	require.NotNil(t, tot.Signal, "bash ignored SIGTERM: it was killed")
	assert.Equal(t, "SIGKILL", *tot.Signal)

	r = runShellsup(t, opts{args: []string{"--pidns"}, command: busyCommand, control: true,
		onFrame: onReady(func(r *running) { _ = r.send(&protocol.Cancel{}) })})
	tot = requireTotals(t, r)
	assert.True(t, tot.Cancelled)
	assert.Equal(t, protocol.ReasonRequest, tot.CancelReason)
	assert.Equal(t, 130, r.exit)
}

// TestPidnsOwnProc: ps and /proc inside show only the command's own tree,
// under an init that is pid 1.
func TestPidnsOwnProc(t *testing.T) {
	r := runShellsup(t, opts{args: []string{"--pidns"},
		command: "sleep 300 & cat /proc/1/comm; echo self $$; ls /proc | grep -c '^[0-9]'; ps -eo comm="})
	tot := requireTotals(t, r)
	require.Equal(t, 0, *tot.ExitCode, "stderr %q", tot.Stderr)
	lines := strings.Split(strings.TrimSpace(tot.Stdout), "\n")
	require.GreaterOrEqual(t, len(lines), 4, "%q", tot.Stdout)
	assert.Equal(t, "shellsup-init", lines[0], "pid 1 is the init")
	assert.NotEqual(t, "self 1", lines[1])
	n, err := strconv.Atoi(lines[2])
	require.NoError(t, err)
	assert.Less(t, n, 12, "pids in /proc: the init, bash, sleep, ls, grep")
	comms := lines[3:]
	for _, c := range comms {
		assert.Contains(t, []string{"shellsup-init", "bash", "sleep", "ps"}, c, "ps shows %q", comms)
	}
	// From outside, bash is reported by its host pid, a descendant of shellsup.
	assert.NotEqual(t, r.start.Pid, r.start.ChildPid)
}

// TestPidnsAttacksReachOnlyTheInit: inside the namespace $PPID is the
// init, which the kernel protects from signals it does not handle; the run
// is contained and reported as usual.
func TestPidnsAttacksReachOnlyTheInit(t *testing.T) {
	for _, attack := range []string{
		"kill -9 $PPID",
		"kill -STOP $PPID",
		"prlimit --pid $PPID --nofile=5:5",
		"kill -SEGV 1; kill -USR1 1; kill -QUIT 1; kill -CHLD 1; kill -PIPE 1",
		// Every other signal, whether the init takes it or its runtime drops
		// it (HUP, INT and TERM it passes on to bash).
		"for s in $(seq 64); do case $s in 1|2|15) ;; *) kill -$s 1 2>/dev/null;; esac; done",
		"ls /proc/$PPID/fd >/dev/null",
		"umount /proc; test $(ls /proc | grep -c '^[0-9]') -lt 12 || kill -9 $$",
	} {
		t.Run(attack, func(t *testing.T) {
			r := runShellsup(t, opts{args: []string{"--pidns", "--timeout", "60"},
				command: "setsid sleep 300 & sleep 300 & " + attack + "; echo ppid $PPID; sleep 0.2; echo after; exit 4"})
			tot := requireTotals(t, r)
			assert.Contains(t, tot.Stdout, "ppid 1\n")
			assert.Contains(t, tot.Stdout, "after")
			require.NotNil(t, tot.ExitCode)
			assert.Equal(t, 4, *tot.ExitCode)
			assert.Equal(t, 4, r.exit)
			assert.Equal(t, "exit", tot.Cleanup.Trigger)
		})
	}
}

// TestPidnsShellsupSIGKILLed: shellsup SIGKILLed at random moments — while
// the init starts, while the command runs, during the cleanup — leaves no
// process of the command alive: the init's parent-death signal takes the
// namespace down.
func TestPidnsShellsupSIGKILLed(t *testing.T) {
	const runs, parallel = 50, 4
	var (
		mu    sync.Mutex
		worst time.Duration
		slow  int
	)
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i := 0; i < runs; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			gone, err := killShellsupOnce(i)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("run %d: %v", i, err)
				return
			}
			worst = max(worst, gone)
			if gone > 200*time.Millisecond {
				slow++
			}
		}(i)
	}
	wg.Wait()
	// The inits of the killed shellsups were reparented to this test
	// binary (a subreaper) and die of their parent-death signal: reap them
	// all before the next test looks for orphans.
	proctest.Poll(t, 10*time.Second, "the killed shellsups' inits to be reaped", func() bool {
		reapertest.ReapOrphans()
		return len(proctest.Children(os.Getpid(), 0)) == 0
	})
	t.Logf("%d runs: the tree was gone at most %v after the SIGKILL (%d runs over 200 ms on this loaded machine)", runs, worst, slow)
}

// killShellsupOnce runs one shellsup --pidns, SIGKILLs it at a moment chosen
// by i, and returns how long the command's processes outlived it.
func killShellsupOnce(i int) (time.Duration, error) {
	tok := reapertest.NewToken()
	command := "trap '' TERM; setsid sleep 300 & (trap '' TERM; sleep 300) & sleep 300 & echo ready; " +
		"for j in $(seq 20); do sleep 300 & done; sleep 300"
	cmd := exec.Command(shellsupBin, "--frames", "--pidns", "--grace", "1", "--timeout", "60", "--", command)
	cmd.Env = baseEnv(tok)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	switch i % 3 {
	case 0: // while the init is starting or the command is
		time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
	case 1: // the command running
		if err := awaitReady(out); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return 0, err
		}
		time.Sleep(time.Duration(rand.IntN(100)) * time.Millisecond)
	case 2: // during the cleanup (its grace is 1 s)
		if err := awaitReady(out); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return 0, err
		}
		if err := protocol.NewEncoder(stdin).Encode(&protocol.Cancel{}); err != nil {
			return 0, err
		}
		time.Sleep(time.Duration(rand.IntN(1200)) * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	killed := time.Now()
	go func() { _, _ = io.Copy(io.Discard, out) }()
	_ = cmd.Wait() // SIGKILLed (or reaped by ReapOrphans of a parallel run)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		reapertest.ReapOrphans() // the init, reparented to the test
		left := tokenProcs(tok)
		if len(left) == 0 {
			return time.Since(killed), nil
		}
		if time.Now().After(deadline) {
			reapertest.Kill(tok)
			return 0, fmt.Errorf("still alive 10 s after shellsup was SIGKILLed: %v", left)
		}
	}
}

// awaitReady reads frames until the command said "ready".
func awaitReady(out io.Reader) error {
	dec := protocol.NewDecoder(out)
	var text strings.Builder
	for !strings.Contains(text.String(), "ready") {
		var f protocol.Frame
		if err := dec.Decode(&f); err != nil {
			return fmt.Errorf("waiting for ready: %w", err)
		}
		if p, ok := f.(*protocol.Progress); ok {
			text.WriteString(p.Text)
		}
	}
	return nil
}

// tokenProcs lists the live processes carrying tok (not the test's
// orphans: parallel runs have their own).
func tokenProcs(tok reapertest.Token) []reapertest.Proc {
	var out []reapertest.Proc
	for _, p := range reapertest.Find(tok) {
		if p.Why == "token" {
			out = append(out, p)
		}
	}
	return out
}

// TestPidnsUnprivileged: as a normal user --pidns goes through a user
// namespace that maps only the caller's own ids, so the files the command
// creates keep the caller's uid and gid.
func TestPidnsUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to nobody")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv is not installed")
	}
	binDir := worldDir(t)
	bin := filepath.Join(binDir, "shellsup")
	copyFile(t, proctest.Unwrapped(shellsupBin), bin)
	work := worldDir(t)
	require.NoError(t, os.Chown(work, 65534, 65534))

	tok := reapertest.NewToken()
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
		bin, "--frames", "--pidns", "--cwd", work, "--",
		"sleep 300 & touch made; id -u; ps -eo comm= | wc -l; grep -E '^Cap(Inh|Prm|Eff|Amb)' /proc/self/status; "+
			"cat /proc/1/fd/3 </dev/null >/dev/null 2>&1 || echo init-fds-closed; exit 6")
	cmd.Env = append(baseEnv(tok), "HOME="+work)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	start, tot, errf := decodeFrames(t, stdout.Bytes())
	require.Nil(t, errf, "error frame; stderr %q", stderr.String())
	require.NotNil(t, tot, "stderr %q", stderr.String())
	assert.Equal(t, "pidns+subreaper", start.Containment)
	require.NotNil(t, tot.ExitCode)
	assert.Equal(t, 6, *tot.ExitCode, "stderr %q", tot.Stderr)
	assert.True(t, strings.HasPrefix(tot.Stdout, "65534\n"), "stdout %q", tot.Stdout)
	for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb"} {
		// the init's own CAP_SYS_ADMIN (ambient, for the mount) is dropped
		// on the thread that forks bash, whichever that is
		assert.Contains(t, tot.Stdout, set+":\t0000000000000000", "no capability reaches bash")
	}
	assert.Contains(t, tot.Stdout, "init-fds-closed", "the init is not dumpable: its status pipe is out of the command's reach")
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(filepath.Join(work, "made"), &st))
	assert.Equal(t, uint32(65534), st.Uid)
	assert.Equal(t, uint32(65534), st.Gid)
	reapertest.Check(t, tok)
}

// worldDir is a fresh directory any user can enter (t.TempDir's parent is
// private).
func worldDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "shellsup-pidns-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	return dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o755))
}

// decodeFrames reads a whole frames-mode output.
func decodeFrames(t *testing.T, b []byte) (*protocol.Start, *protocol.Totals, *protocol.Error) {
	t.Helper()
	var (
		start *protocol.Start
		tot   *protocol.Totals
		errf  *protocol.Error
	)
	dec := protocol.NewDecoder(bytes.NewReader(b))
	for {
		var f protocol.Frame
		err := dec.Decode(&f)
		if errors.Is(err, io.EOF) {
			return start, tot, errf
		}
		require.NoError(t, err)
		switch f := f.(type) {
		case *protocol.Start:
			start = f
		case *protocol.Totals:
			tot = f
		case *protocol.Error:
			errf = f
		}
	}
}

// TestHumanCallerKilled: the caller of a human-mode shellsup is SIGKILLed
// while the command prints nothing. shellsup sees its parent go (a pidfd,
// not a failed write) and ends the run with parent-gone at once.
func TestHumanCallerKilled(t *testing.T) {
	for _, mode := range []string{"human", "frames"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			outFile, errFile := filepath.Join(dir, "out"), filepath.Join(dir, "err")
			frames := ""
			if mode == "frames" {
				frames = "--frames"
			}
			tok := reapertest.NewToken()
			// The caller: a bash that starts shellsup (stdin /dev/null: no
			// control channel; output to files, so nothing fails to write)
			// and waits.
			caller := exec.Command("/bin/bash", "-c", `"$0" $1 --timeout 60 -- 'sleep 300 & echo ready >&2; sleep 300' </dev/null >"$2" 2>"$3" & echo $!; wait`,
				shellsupBin, frames, outFile, errFile)
			caller.Env = baseEnv(tok)
			pipe, err := caller.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, caller.Start())
			line, err := readLine(bufio.NewReader(pipe), 10*time.Second)
			require.NoError(t, err)
			sup, err := strconv.Atoi(strings.TrimSpace(line))
			require.NoError(t, err, "caller said %q", line)
			proctest.Poll(t, 10*time.Second, "the command to start", func() bool {
				b, _ := os.ReadFile(errFile)
				return bytes.Contains(b, []byte("ready")) || mode == "frames" && len(tokenProcs(tok)) >= 3
			})

			require.NoError(t, caller.Process.Kill())
			_ = caller.Wait()
			killed := time.Now()
			proctest.Poll(t, 10*time.Second, "the tree to go", func() bool {
				reapertest.ReapOrphans() // shellsup, reparented to the test
				_, err := os.Stat(fmt.Sprintf("/proc/%d", sup))
				return len(tokenProcs(tok)) == 0 && os.IsNotExist(err)
			})
			t.Logf("tree and shellsup gone %v after the caller was SIGKILLed", time.Since(killed))
			reapertest.Check(t, tok)
			if mode == "human" {
				b, _ := os.ReadFile(errFile)
				assert.Contains(t, string(b), "cancelled (parent-gone)")
				return
			}
			b, err := os.ReadFile(outFile)
			require.NoError(t, err)
			_, tot, _ := decodeFrames(t, b)
			require.NotNil(t, tot)
			assert.True(t, tot.Cancelled)
			assert.Equal(t, protocol.ReasonParentGone, tot.CancelReason)
		})
	}
}

// TestHumanReaderGone: the reader of a human-mode shellsup's stdout goes
// away while the command prints nothing: the hang-up ends the run as a
// broken pipe, 141, with one line.
func TestHumanReaderGone(t *testing.T) {
	tok := reapertest.NewToken()
	cmd := exec.Command(shellsupBin, "--timeout", "60", "--", "sleep 300 & echo ready >&2; sleep 300")
	cmd.Env = baseEnv(tok)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	errPipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	r := bufio.NewReader(errPipe)
	line, err := readLine(r, 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)
	out.Close() // nobody reads shellsup's stdout any more
	rest, _ := io.ReadAll(r)
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 141, ee.ExitCode(), "a broken pipe exits as a pipeline's SIGPIPE: 128+13; stderr %q", rest)
	assert.Regexp(t, `^shellsup: broken pipe \(the reader of shellsup's output is gone\) in [0-9.]+s; [^\n]*\n$`, string(rest), "one line")
	reapertest.Check(t, tok)
}

// TestPidnsUnavailable: where PID namespaces cannot be made (here: a user
// namespace the test creates, whose namespace limits it sets to 0),
// --pidns refuses with containment_unavailable and nothing is spawned.
func TestPidnsUnavailable(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare is not installed")
	}
	marker := filepath.Join(t.TempDir(), "ran")
	tok := reapertest.NewToken()
	cmd := exec.Command("unshare", "--user", "--map-root-user", "/bin/sh", "-c",
		`echo 0 >/proc/sys/user/max_pid_namespaces && echo 0 >/proc/sys/user/max_user_namespaces && exec "$0" --frames --pidns -- "touch $1"`,
		shellsupBin, marker)
	cmd.Env = baseEnv(tok)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr %q", stderr.String())
	assert.Equal(t, 125, ee.ExitCode())
	start, tot, errf := decodeFrames(t, stdout.Bytes())
	assert.Nil(t, start)
	assert.Nil(t, tot)
	require.NotNil(t, errf, "stderr %q", stderr.String())
	assert.Equal(t, protocol.CategoryContainmentUnavailable, errf.Category)
	assert.Contains(t, errf.Message, "PID namespace")
	assert.Contains(t, errf.Message, "ENOSPC")
	assert.NoFileExists(t, marker, "nothing may run")
	reapertest.Check(t, tok)
}

// TestPidnsInitNotByAccident: the init's argv[0] and key are not enough:
// outside pid 1 the binary is plain shellsup, which refuses the arguments.
func TestPidnsInitNotByAccident(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	cmd := &exec.Cmd{Path: shellsupBin, Args: []string{"shellsup-pidns-init", "shellsup-pidns-init-7f3a91c2-v1", "touch " + marker}}
	cmd.Env = baseEnv(reapertest.NewToken())
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "output %q", out)
	assert.Equal(t, 125, ee.ExitCode())
	assert.Contains(t, string(out), "shellsup: ")
	assert.NoFileExists(t, marker)
}

// TestPidnsExecRefusedByKernel: as TestExecRefusedByKernel, through the
// init: the kernel refuses the init's exec (it carries the command and the
// environment with PWD, as bash would), and shellsup reports exec_failed
// as without --pidns.
func TestPidnsExecRefusedByKernel(t *testing.T) {
	tok := reapertest.NewToken()
	r, code, _, _ := execRefused(t, tok, "--pidns")
	assert.Equal(t, 126, code)
	require.NotNil(t, r.errf, "frames %v", r.frameTypes())
	assert.Equal(t, protocol.CategoryExecFailed, r.errf.Category)
	assert.Contains(t, r.errf.Message, "E2BIG")
	assert.Contains(t, r.errf.Message, "argument list too long")
	reapertest.Check(t, tok)
}
