package shellsup

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

func init() {
	helpers.Register("harness", func([]string) int { return harnessHelper(false) })
	helpers.Register("harness-holding-stdin", func([]string) int { return harnessHelper(true) })
}

// harnessHelper is a Go harness: it runs a command that leaves a setsid
// child and a background job behind, says "ready (pid: N)" once the
// command is running, and blocks in Run. The test then SIGKILLs it.
//
// With holdStdin, it first starts a "holder" process (without the leak
// token) that inherits Run's end of shellsup's control channel, so that
// shellsup's stdin does not reach EOF when the harness dies: only the
// parent-death signal can tell shellsup. It says "holder (pid: N)".
func harnessHelper(holdStdin bool) int {
	res, err := Run(context.Background(), Request{
		Command: `setsid sleep 300 & sleep 300 & echo ready; wait`,
		Progress: func(stream, text string) error {
			if !strings.Contains(text, "ready") {
				return nil
			}
			if holdStdin {
				pid, err := startHolder()
				if err != nil {
					return err
				}
				fmt.Printf("holder (pid: %d)\n", pid)
			}
			fmt.Printf("ready (pid: %d)\n", os.Getpid())
			return nil
		},
	})
	fmt.Printf("Run returned, which it should not have: %+v, %v\n", res, err)
	return 1
}

// startHolder starts a sleep that inherits every socket of this process —
// Run's end of shellsup's control channel among them — by clearing their
// close-on-exec flags first.
func startHolder() (int, error) {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	for _, e := range fds {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		link, _ := os.Readlink("/proc/self/fd/" + e.Name()) // gone: not a socket to hold
		if !strings.HasPrefix(link, "socket:") {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			return 0, fmt.Errorf("clearing FD_CLOEXEC on fd %d: %w", fd, err)
		}
	}
	holder := exec.Command("sleep", "300")
	holder.Env = []string{"PATH=" + os.Getenv("PATH")} // no leak token: not part of shellsup's tree
	if err := holder.Start(); err != nil {
		return 0, err
	}
	return holder.Process.Pid, nil
}

// startHelper starts the test binary as the helper program name, with the
// leak token in its environment, and returns it with its stdout lines.
func startHelper(t *testing.T, name string, tok reapertest.Token) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := helpers.Command(name)
	cmd.Env = append(cmd.Env, tok.Env())
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout) // the helper's own output, not a command's
		for sc.Scan() {
			lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, stdout) // a too-long line: keep draining
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // it may be gone already
		_ = cmd.Wait()
	})
	return cmd, lines
}

// awaitLine waits for a line starting with prefix.
func awaitLine(t *testing.T, lines <-chan string, prefix string, within time.Duration) string {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case line, ok := <-lines:
			require.True(t, ok, "the helper ended before printing %q", prefix)
			if strings.HasPrefix(line, prefix) {
				return line
			}
		case <-deadline:
			t.Fatalf("no line %q from the helper within %v", prefix, within)
		}
	}
}

// newRequest returns a Request for command whose processes carry a fresh leak
// token, with a clean HOME, and checks for leaks when the test ends.
func newRequest(t *testing.T, command string) Request {
	t.Helper()
	tok := reapertest.NewToken()
	t.Cleanup(func() { reapertest.Check(t, tok) })
	return Request{Command: command, Env: env(t, tok)}
}

// env is a small, clean environment carrying tok.
func env(t *testing.T, tok reapertest.Token) []string {
	return []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", tok.Env()}
}

// awaitNoLeak polls, with a deadline, until no process carries tok and no
// orphan of the test is left, reaping orphans that have become zombies
// (a shellsup whose harness died is reparented to the test binary). It
// returns how long that took.
func awaitNoLeak(t *testing.T, tok reapertest.Token, within time.Duration, owned ...int) time.Duration {
	t.Helper()
	start := time.Now()
	var left []reapertest.Proc
	gone := proctest.Await(within, func() bool {
		if left = reapertest.Find(tok, owned...); len(left) > 0 {
			reapertest.ReapOrphans()
		}
		return len(left) == 0
	})
	if !gone {
		t.Fatalf("still alive %v after the harness died:\n  %s", within, strings.Join(procStrings(left), "\n  "))
	}
	return time.Since(start)
}

func procStrings(ps []reapertest.Proc) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = fmt.Sprintf("pid %d (ppid %d, state %s, %s): %q", p.Pid, p.PPid, p.State, p.Why, p.Cmdline)
	}
	return out
}

// writeScript writes an executable shell script and returns its path.
func writeScript(t *testing.T, body string) string {
	t.Helper()
	path := t.TempDir() + "/fake-shellsup"
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return path
}

// reapOrphansAfter makes t, when it ends, wait (at most 5 s) for the orphans
// its command left to the test binary, a subreaper, to die and reaps them: a
// test whose harness is killed on purpose (its setsid survivor is reparented
// here) must not leave them to the next test's leak check.
func reapOrphansAfter(t *testing.T) {
	t.Cleanup(func() {
		proctest.Await(5*time.Second, func() bool {
			reapertest.ReapOrphans()
			for _, p := range reapertest.Find(reapertest.NewToken()) {
				if p.Why == "orphan of the test" {
					return false
				}
			}
			return true
		})
	})
}
