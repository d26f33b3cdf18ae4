//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
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

// Human mode on a terminal the command stops (tcflow TCOOFF on shellsup's
// own pts, which any process of the same user can do): shellsup must still
// end within its bound, and tell the truth about what it captured.

func init() {
	helpers.Register("tty-off", func(args []string) int { helperTTYOff(args); return 0 })
}

// helperTTYOff stops the output of the terminal args[0] (opened without
// becoming its controlling terminal), and writes what its own stdout and
// stderr are (pipe:[INODE]) to the file args[1], if given.
func helperTTYOff(args []string) {
	fd, err := unix.Open(args[0], unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		fail("open %s: %v", args[0], err)
	}
	if err := unix.IoctlSetInt(fd, unix.TCXONC, unix.TCOOFF); err != nil {
		fail("tcflow TCOOFF: %v", err)
	}
	if len(args) > 1 {
		out, _ := os.Readlink("/proc/self/fd/1")
		errs, _ := os.Readlink("/proc/self/fd/2")
		if err := os.WriteFile(args[1], []byte(out+"\n"+errs+"\n"), 0o644); err != nil {
			fail("write %s: %v", args[1], err)
		}
	}
}

// pty is a pseudo-terminal: the master, read by the test all along, and
// the slave's path, which shellsup gets as its stdout and stderr.
type pty struct {
	master *os.File
	slave  *os.File
	name   string
	got    chan []byte // everything read from the master, once it reports EIO
}

func newPty(t *testing.T) *pty { return newPtyRead(t, 64<<10, 0) }

// newPtyRead is a pty whose master is read chunk bytes at a time, with a
// pause of every between reads (a slow terminal, or an ssh link).
func newPtyRead(t *testing.T, chunk int, every time.Duration) *pty {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	require.NoError(t, unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0)) // unlockpt
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	name := "/dev/pts/" + strconv.Itoa(n)
	s, err := os.OpenFile(name, os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	p := &pty{master: m, slave: s, name: name, got: make(chan []byte, 1)}
	go func() {
		var b bytes.Buffer
		buf := make([]byte, chunk)
		for {
			k, err := m.Read(buf)
			b.Write(buf[:k])
			if err != nil { // EIO once no slave is open
				p.got <- b.Bytes()
				return
			}
			time.Sleep(every)
		}
	}()
	t.Cleanup(func() { m.Close(); s.Close() })
	return p
}

// resume restarts the terminal's output (tcflow TCOON).
func (p *pty) resume(t *testing.T) {
	t.Helper()
	require.NoError(t, unix.IoctlSetInt(int(p.slave.Fd()), unix.TCXONC, unix.TCOON))
}

// output resumes the terminal, closes the test's slave and returns all that
// reached the terminal, without the carriage returns of its output
// processing. Call it once shellsup has exited.
func (p *pty) output(t *testing.T) string {
	t.Helper()
	p.resume(t)
	require.NoError(t, p.slave.Close())
	select {
	case b := <-p.got:
		return strings.ReplaceAll(string(b), "\r", "")
	case <-time.After(30 * time.Second):
		t.Fatal("the terminal's master never reported the end")
		return ""
	}
}

// startOnPty starts bin in human mode with stdout and stderr on the
// terminal p.
func startOnPty(t *testing.T, p *pty, bin string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = p.slave, p.slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	require.NoError(t, cmd.Start())
	return cmd
}

// waitExit waits up to within for cmd, and kills it past that.
func waitExit(t *testing.T, cmd *exec.Cmd, within time.Duration) (code int, took time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode(), time.Since(start)
	case <-time.After(within):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("shellsup still running %v after it should have ended, on a stopped terminal", within)
		return 0, 0
	}
}

// A timed-out run on a terminal the command stopped ends within the
// documented bound (timeout + grace + 3 s kill budget + 100 ms, plus the
// drain's grace, the terminal's 15 s and the summary's 2 s; the 5 s slack
// is a liveness check, not a performance one), with 124 and nothing left.
func TestStoppedTerminalDoesNotHoldTheExit(t *testing.T) {
	p := newPty(t)
	tok := reapertest.NewToken()
	cmd := startOnPty(t, p, shellsupBin, baseEnv(tok), "--timeout", "2", "--grace", "1", "--",
		helpers.Shell("tty-off", p.name)+"; seq 1 20000; sleep 30")
	code, took := waitExit(t, cmd, 2*time.Second+time.Second+3100*time.Millisecond+15*time.Second+2*time.Second+5*time.Second)
	assert.Equal(t, 124, code)
	t.Logf("shellsup exited after %v", took)
	reapertest.Check(t, tok)
	p.output(t) // the master ends: nothing holds the terminal
}

// stoppedRun runs seq 1 20000 on a terminal the command stopped, with a
// budget that captures all of it, in the seams build whose summary waits
// for the terminal as long as the test needs. ready is called once the
// tree is gone, drained once the drain has given up and closed the command's
// pipes (shellsup is writing its summary).
func stoppedRun(t *testing.T, env []string, args []string, ready, drained func(cmd *exec.Cmd, p *pty)) (code int, out string) {
	t.Helper()
	p := newPty(t)
	tok := reapertest.NewToken()
	links := t.TempDir() + "/pipes"
	args = append(args, "--budget", "524288", "--timeout", "2", "--grace", "1", "--",
		helpers.Shell("tty-off", p.name, links)+"; seq 1 20000; sleep 30")
	// The stall window is shortened (the seams build reads it): these tests
	// are about what happens after it; the production window is checked by
	// TestStoppedTerminalDoesNotHoldTheExit. A test's own value comes later
	// in env and wins.
	env = append([]string{"SHELLSUP_TEST_TTY_STALL=1s"}, env...)
	cmd := startOnPty(t, p, seamsBin, append(baseEnv(tok), env...), args...)
	proctest.Poll(t, 30*time.Second, "the command to stop the terminal", func() bool {
		b, err := os.ReadFile(links)
		return err == nil && bytes.Count(b, []byte("\n")) == 2
	})
	b, err := os.ReadFile(links)
	require.NoError(t, err)
	pipes := strings.Fields(string(b))
	proctest.Poll(t, 30*time.Second, "the tree to be gone", func() bool {
		return len(reapertest.Find(tok, cmd.Process.Pid)) == 0
	})
	if ready != nil {
		ready(cmd, p)
	}
	if drained != nil {
		proctest.Poll(t, 30*time.Second, "the drain to close the command's pipes", func() bool {
			return !holds(cmd.Process.Pid, pipes)
		})
		drained(cmd, p)
	}
	code, _ = waitExit(t, cmd, 30*time.Second)
	reapertest.Check(t, tok)
	return code, p.output(t)
}

// holds reports whether process pid has one of the files links names
// (pipe:[INODE]) open.
func holds(pid int, links []string) bool {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false
	}
	for _, e := range ents {
		l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
		for _, want := range links {
			if l == want {
				return true
			}
		}
	}
	return false
}

var (
	// stoppedRe is the summary of a timed-out run whose terminal stopped.
	stoppedRe = regexp.MustCompile(`shellsup: timed out in \d+\.\ds; \d+ process(es)? cleaned up[^;]*; captured (\d+) of (\d+) bytes; the terminal stopped taking output: (\d+) bytes not shown\n`)
	// noticeRe is any line of shellsup's own.
	noticeRe = regexp.MustCompile(`shellsup: [^\n]*\n`)
)

// Once the terminal resumes, the summary is true: every byte the command
// wrote captured and counted, though the terminal took none of it before
// shellsup gave up; the bytes not shown said; no pipe said held open.
func TestStoppedTerminalSummaryTellsTheTruth(t *testing.T) {
	code, out := stoppedRun(t, []string{"SHELLSUP_TEST_SUMMARY_WAIT=60s"}, nil, nil, func(_ *exec.Cmd, p *pty) {
		p.resume(t) // shellsup is writing its summary to the stopped terminal
	})
	assert.Equal(t, 124, code)
	m := stoppedRe.FindStringSubmatch(out)
	require.NotNil(t, m, "no summary with the terminal's note in %q", tail(out))
	want := seqText(20000)
	total := strconv.Itoa(len(want))
	assert.Equal(t, total, m[2], "captured")
	assert.Equal(t, total, m[3], "total")
	assert.NotContains(t, out, "held open")
	notShown, _ := strconv.Atoi(m[4])
	shown := noticeRe.ReplaceAllString(out, "")
	require.True(t, strings.HasPrefix(want, shown), "the terminal got something else than a prefix of the output: %q", tail(shown))
	// What was not shown is what the terminal had not taken when shellsup
	// gave up; a write under way then (one piece of 1 KiB) lands on resume.
	assert.GreaterOrEqual(t, len(shown), len(want)-notShown)
	assert.LessOrEqual(t, len(shown), len(want)-notShown+1024)
}

// A second Ctrl-C (here the first signal after the ending) ends the wait
// for a stopped terminal at once, where the seams build would otherwise
// wait a minute for it, and shellsup still exits 124, leaving nothing.
func TestHurryEndsTheWaitForAStoppedTerminal(t *testing.T) {
	var sent time.Time
	code, _ := stoppedRun(t, []string{"SHELLSUP_TEST_TTY_STALL=60s", "SHELLSUP_TEST_SUMMARY_WAIT=60s"}, nil,
		func(cmd *exec.Cmd, _ *pty) {
			sent = time.Now()
			require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		}, nil)
	assert.Equal(t, 124, code)
	assert.Less(t, time.Since(sent), 30*time.Second, "the hurry did not end the wait") // liveness: the seams' waits are 60 s
}

// tail is the end of s, for a failure message.
func tail(s string) string {
	if len(s) > 600 {
		return "…" + s[len(s)-600:]
	}
	return s
}

// TestSlowTerminalGetsEveryByte: a terminal that takes output slowly but
// steadily (1 KiB every 250 ms, 4 KB/s) gets every byte of a command that
// exits at once, and the summary, however long that takes. The kernel
// wakes a writer blocked on a pty only once most of its buffer is read,
// so a 1 KiB write can take seconds there: a stall window of 1 s gave up
// on it and dropped the rest.
func TestSlowTerminalGetsEveryByte(t *testing.T) {
	p := newPtyRead(t, 1<<10, 250*time.Millisecond)
	tok := reapertest.NewToken()
	cmd := startOnPty(t, p, shellsupBin, baseEnv(tok), "--", "seq 1 8000")
	code, took := waitExit(t, cmd, 60*time.Second)
	assert.Equal(t, 0, code)
	t.Logf("shellsup exited after %v", took)
	reapertest.Check(t, tok)
	out := p.output(t)
	assert.True(t, strings.HasPrefix(out, seqText(8000)), "every line reached the terminal (%d bytes)", len(out))
	assert.Regexp(t, `shellsup: exit 0 in \d+\.\ds; 1 process cleaned up in \d+ms; captured \d+ of `+strconv.Itoa(len(seqText(8000)))+` bytes`, out)
	assert.NotContains(t, out, "not shown")
}
