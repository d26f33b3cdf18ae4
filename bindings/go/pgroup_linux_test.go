package shellsup

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// The orphaned-group reproduction: three helpers, each the next one's
// parent. The leader L is started by the test in a session of its own
// (nothing reaches the test binary's group or session); it starts the link
// T in a new process group P of that session; T starts the harness H in P.
// H runs a command that stops shellsup. Once T sees shellsup stopped, it
// exits: H is reparented outside the session, so P is orphaned, and if P
// held a stopped process the kernel would send all of P SIGHUP and SIGCONT.
func init() {
	helpers.Register("orphan-leader", orphanLeader)
	helpers.Register("orphan-link", orphanLink)
	helpers.Register("orphan-harness", orphanHarness)
	helpers.Register("ctrl-c-harness", func([]string) int { return ctrlCHarness() })
}

// Files of the reproduction, in the directory the test passes down.
const (
	harnessPidFile = "harness.pid" // T: H's pid
	linkFile       = "link.txt"    // T: what it saw before exiting
	outcomeFile    = "outcome.txt" // H: what Run returned
)

// The helpers below the leader are started from the registry entries the
// test passes down (args: directory, link's entry, harness's entry), so
// that the test binary's registry knows they were started.

// nextHelper is the test binary run as the helper of entry, with args.
func nextHelper(entry string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), entry) // the later entry wins
	return cmd
}

// orphanLeader (L, a session leader) starts the link in a new process
// group of its session and waits for it.
func orphanLeader(args []string) int {
	link := nextHelper(args[1], args[0], args[2])
	link.Stderr = os.Stderr
	link.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := link.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "orphan-leader: the link: %v\n", err)
		return 1
	}
	return 0
}

// orphanLink (T) starts the harness in T's own group P (no new group), waits until
// the harness's shellsup is stopped, and exits without waiting for it.
func orphanLink(args []string) int {
	dir := args[0]
	harness := nextHelper(args[1], dir)
	harness.Stderr = os.Stderr
	if err := harness.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "orphan-link: starting the harness: %v\n", err)
		return 1
	}
	pid := harness.Process.Pid
	if err := os.WriteFile(filepath.Join(dir, harnessPidFile), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "orphan-link: %v\n", err)
		return 1
	}
	var stopped []int
	if !proctest.Await(30*time.Second, func() bool {
		stopped = proctest.Children(pid, 'T')
		return len(stopped) > 0
	}) {
		fmt.Fprintf(os.Stderr, "orphan-link: the harness (pid %d) had no stopped child within 30 s\n", pid)
		return 1
	}
	msg := fmt.Sprintf("shellsup (pid %d) stopped; harness pgid %d, link pgid %d", stopped[0], pgid(pid), pgid(0))
	if err := os.WriteFile(filepath.Join(dir, linkFile), []byte(msg), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "orphan-link: %v\n", err)
		return 1
	}
	return 0 // the harness is not waited for: it outlives this process
}

// orphanHarness (H) runs a command that stops its shellsup, with a short
// watchdog, and writes what Run returned to a file: its stdout would be a
// pipe to nobody once the link has gone.
func orphanHarness(args []string) int {
	watchdogSlack = 3 * time.Second // the link has this long to exit while shellsup is stopped
	res, err := Run(context.Background(), Request{
		Command: "setsid sleep 300 & sleep 300 & kill -STOP $PPID; sleep 300",
		Timeout: time.Second,
		Grace:   new(time.Duration(0)),
		Env:     []string{"HOME=" + os.Getenv("HOME"), "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", reapertest.TokenVar + "=" + os.Getenv(reapertest.TokenVar)},
	})
	msg := fmt.Sprintf("Run returned: exit code %d, error: %v", res.ExitCode, err)
	if werr := os.WriteFile(filepath.Join(args[0], outcomeFile), []byte(msg), 0o644); werr != nil {
		fmt.Fprintf(os.Stderr, "orphan-harness: %v\n", werr)
		return 1
	}
	return 0
}

// pgid is the process group of pid (0: this process), or -1.
func pgid(pid int) int {
	g, err := unix.Getpgid(pid)
	if err != nil {
		return -1
	}
	return g
}

// TestStoppedShellsupInOrphanedGroupSparesTheHarness is the reproduction
// of a harness killed by SIGHUP because its command stopped shellsup: with
// shellsup in the harness's process group, the group's orphaning makes
// the kernel send it SIGHUP then SIGCONT, and the Go harness dies of the
// SIGHUP. With shellsup in a group of its own, the harness lives, and Run
// returns once the watchdog has resumed shellsup and it has cleaned up.
func TestStoppedShellsupInOrphanedGroupSparesTheHarness(t *testing.T) {
	tok := reapertest.NewToken()
	t.Cleanup(func() { reapertest.Check(t, tok) })
	dir := t.TempDir()
	leader := helpers.Command("orphan-leader", dir, helpers.Env("orphan-link"), helpers.Env("orphan-harness"))
	leader.Env = append(leader.Env, tok.Env())
	leader.Stderr = os.Stderr
	leader.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	require.NoError(t, leader.Run(), "the leader and the link ended badly (their stderr is above)")

	link, err := os.ReadFile(filepath.Join(dir, linkFile))
	require.NoError(t, err)
	t.Logf("the link saw: %s", link)
	pidText, err := os.ReadFile(filepath.Join(dir, harnessPidFile))
	require.NoError(t, err)
	harness, err := strconv.Atoi(string(pidText))
	require.NoError(t, err)

	// The link has exited: the harness is an orphan, reparented to the
	// test binary (a child subreaper), which reaps it here.
	ws := reapChild(t, harness, 60*time.Second)
	require.False(t, ws.Signaled(), "the harness died of %v: the orphaned group with the stopped shellsup was sent SIGHUP", ws.Signal())
	require.Equal(t, 0, ws.ExitStatus(), "the harness failed (its stderr is above)")

	outcome, err := os.ReadFile(filepath.Join(dir, outcomeFile))
	require.NoError(t, err, "the harness wrote no outcome")
	msg := string(outcome)
	assert.Contains(t, msg, "Run returned")
	assert.Contains(t, msg, "it was stopped", "shellsup stayed stopped until the watchdog: nothing else resumed it")
	assert.Contains(t, msg, "sent it SIGCONT and SIGTERM")
	assert.Contains(t, msg, "it then cleaned up and reported")
	awaitNoLeak(t, tok, 30*time.Second)
}

// reapChild reaps pid, a child of the test binary, polling with a
// deadline, and returns its wait status.
func reapChild(t *testing.T, pid int, within time.Duration) unix.WaitStatus {
	t.Helper()
	var ws unix.WaitStatus
	var werr error
	if !proctest.Await(within, func() bool {
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		werr = err
		return got == pid || err != nil
	}) {
		_ = unix.Kill(pid, unix.SIGKILL) // our child: the pid cannot have been reused before we reap it
		_, _ = unix.Wait4(pid, &ws, 0, nil)
		t.Fatalf("the harness (pid %d) did not exit within %v", pid, within)
	}
	require.NoError(t, werr, "waiting for the harness (pid %d)", pid)
	return ws
}

// TestShellsupRunsInAProcessGroupOfItsOwn: shellsup leads a process group
// that is not the caller's, in the caller's session.
func TestShellsupRunsInAProcessGroupOfItsOwn(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := newRequest(t, "echo ready; sleep 300")
	var sup []int
	var groups, sessions []int
	req.Progress = func(stream, text string) error {
		if !strings.Contains(text, "ready") {
			return nil
		}
		for _, pid := range proctest.Children(os.Getpid(), 0) {
			if st, err := proctest.Stat(pid); err == nil && st.Comm == "shellsup" {
				g, gerr := unix.Getpgid(pid)
				s, serr := unix.Getsid(pid)
				if gerr == nil && serr == nil {
					sup, groups, sessions = append(sup, pid), append(groups, g), append(sessions, s)
				}
			}
		}
		cancel()
		return nil
	}
	res, err := Run(ctx, req)
	require.NoError(t, err)
	require.True(t, res.Cancelled)
	require.Len(t, sup, 1, "one shellsup child of the test binary")
	ownSession, err := unix.Getsid(0)
	require.NoError(t, err)
	assert.Equal(t, sup[0], groups[0], "shellsup leads its own process group")
	assert.NotEqual(t, unix.Getpgrp(), groups[0], "shellsup is not in the caller's process group")
	assert.Equal(t, ownSession, sessions[0], "shellsup is in the caller's session")
}

// ctrlCHarness cancels its run on SIGINT (signal.NotifyContext), as the
// README advises, and prints what Run returned.
func ctrlCHarness() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := Run(ctx, Request{
		Command: "setsid sleep 300 & sleep 300 & echo ready; wait",
		Progress: func(stream, text string) error {
			if strings.Contains(text, "ready") {
				fmt.Println("ready")
			}
			return nil
		},
	})
	fmt.Printf("returned: cancelled %v, reason %q, clean %v, error %v\n", res.Cancelled, res.CancelReason, res.Cleanup.Clean(), err)
	return 0
}

// TestCtrlCToTheCallersGroupCancelsTheRun: a terminal's Ctrl-C is SIGINT
// to the foreground process group. It reaches the caller only (shellsup
// has a group of its own); the caller cancels ctx, and the run ends
// cancelled by request, with everything cleaned up.
func TestCtrlCToTheCallersGroupCancelsTheRun(t *testing.T) {
	tok := reapertest.NewToken()
	t.Cleanup(func() { reapertest.Check(t, tok) })
	cmd := helpers.Command("ctrl-c-harness")
	cmd.Env = append(cmd.Env, tok.Env())
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its group stands for the terminal's foreground group
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := linesOf(stdout)
	awaitLine(t, lines, "ready", 30*time.Second)
	require.NoError(t, unix.Kill(-cmd.Process.Pid, unix.SIGINT))
	line := awaitLine(t, lines, "returned:", 30*time.Second)
	assert.Equal(t, `returned: cancelled true, reason "request", clean true, error <nil>`, line)
	require.NoError(t, cmd.Wait())
	awaitNoLeak(t, tok, 30*time.Second)
}

// linesOf sends the lines of r on a channel, closed at EOF.
func linesOf(r io.Reader) <-chan string {
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r) // the helper's own short lines
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines
}
