//go:build linux

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// human runs shellsup in human mode and returns its stdout, stderr and
// exit code.
func human(t *testing.T, args []string, command string) (stdout, stderr []byte, code int) {
	t.Helper()
	tok := reapertest.NewToken()
	cmd := exec.Command(shellsupBin, append(args, "--", command)...)
	cmd.Env = baseEnv(tok)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run() // the exit code is returned
	reapertest.Check(t, tok)
	return out.Bytes(), errb.Bytes(), cmd.ProcessState.ExitCode()
}

// summaryRe is the human summary of a clean exit.
var summaryRe = regexp.MustCompile(`^shellsup: exit (\d+) in \d+\.\ds; (\d+) (process|processes) cleaned up( \(\d+ killed\))? in \d+ms; captured (\d+) of (\d+) bytes`)

// Every line reaches the terminal, far past the capture budget, and the
// summary still counts the bounded capture.
func TestHumanModeForwardsEverything(t *testing.T) {
	out, errb, code := human(t, nil, "seq 1 200000")
	assert.Equal(t, 0, code)
	assert.Equal(t, 200000, bytes.Count(out, []byte("\n")))
	assert.Equal(t, seqText(200000), string(out))
	assert.NotContains(t, string(out), "truncated")
	m := summaryRe.FindStringSubmatch(string(errb))
	require.NotNil(t, m, "summary %q", errb)
	assert.Equal(t, "65536", m[5], "the capture stays bounded")
	assert.Equal(t, "1288895", m[6])
	assert.Contains(t, string(errb), "(truncated)")
}

// Binary output reaches stdout and stderr byte for byte, not re-encoded.
func TestHumanModeIsByteIdentical(t *testing.T) {
	dir := t.TempDir()
	out, errb, code := human(t, []string{"--cwd", dir},
		"head -c 1M /dev/urandom > out.bin && head -c 300K /dev/urandom > err.bin && cat out.bin && cat err.bin >&2")
	require.Equal(t, 0, code, "stderr %q", errb)
	want, err := os.ReadFile(filepath.Join(dir, "out.bin"))
	require.NoError(t, err)
	wantErr, err := os.ReadFile(filepath.Join(dir, "err.bin"))
	require.NoError(t, err)
	require.Len(t, want, 1<<20)
	assert.True(t, bytes.Equal(want, out), "stdout differs (%d bytes)", len(out))
	assert.True(t, bytes.HasPrefix(errb, wantErr), "stderr does not start with the command's bytes")
	assert.Regexp(t, summaryRe, string(errb[len(wantErr):]))
}

// With --spill as well, the terminal and the spill both get every byte.
func TestHumanModeWithSpill(t *testing.T) {
	dir := spillDir(t)
	out, errb, code := human(t, []string{"--spill", dir}, "seq 1 300000")
	require.Equal(t, 0, code, "stderr %q", errb)
	assert.Equal(t, seqText(300000), string(out))
	runs, err := filepath.Glob(filepath.Join(dir, "shellsup-*", "stdout"))
	require.NoError(t, err)
	require.Len(t, runs, 1)
	spilled, err := os.ReadFile(runs[0])
	require.NoError(t, err)
	assert.Equal(t, string(out), string(spilled))
	assert.Contains(t, string(errb), "; spilled to "+filepath.Dir(runs[0]))
}

func TestHumanSummaryWording(t *testing.T) {
	if proctest.Tier() == "pidns" {
		t.Skip("under --pidns the init reaps its namespace: the summary's counts are the init's (see the README)")
	}
	_, errb, code := human(t, nil, "echo hi")
	assert.Equal(t, 0, code)
	assert.Regexp(t, `^shellsup: exit 0 in \d+\.\ds; 1 process cleaned up in \d+ms; captured 3 of 3 bytes\n$`, string(errb))

	// bash, a background sleep and a TERM-ignorer: 3 processes, 1 killed.
	_, errb, code = human(t, []string{"--grace", "0.3", "--cwd", t.TempDir()}, termIgnorer+"sleep 300 & echo started")
	assert.Equal(t, 0, code)
	assert.Regexp(t, `^shellsup: exit 0 in \d+\.\ds; 3 processes cleaned up \(1 killed\) in \d+ms; captured 8 of 8 bytes\n$`, string(errb))

	_, errb, code = human(t, nil, "exit 3")
	assert.Equal(t, 3, code)
	assert.Regexp(t, `^shellsup: exit 3 in `, string(errb))
	assert.NotContains(t, string(errb), "exit code")
}

func TestHumanQuiet(t *testing.T) {
	out, errb, code := human(t, []string{"--quiet"}, "echo hi; echo err >&2; exit 4")
	assert.Equal(t, 4, code)
	assert.Equal(t, "hi\n", string(out))
	assert.Equal(t, "err\n", string(errb), "no summary line")
}

// startHuman starts shellsup in human mode and waits until the command
// printed "ready".
func startHuman(t *testing.T, tok reapertest.Token, args []string, command string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(shellsupBin, append(args, "--", command)...)
	cmd.Env = baseEnv(tok)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	br := bufio.NewReader(out)
	line, err := readLine(br, 20*time.Second)
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)
	go func() { _, _ = io.Copy(io.Discard, br) }()
	return cmd, &errb
}

// termIgnorer starts a process that ignores SIGTERM and waits until it
// does (it marks the file "ignoring" in the working directory).
const termIgnorer = `(trap "" TERM; : > ignoring; exec sleep 300) & until [ -e ignoring ]; do sleep 0.01; done; `

// A cancel by signal N exits 128+N, in human mode as in frames mode.
func TestSignalCancelExits128PlusN(t *testing.T) {
	for sig, code := range map[syscall.Signal]int{syscall.SIGTERM: 143, syscall.SIGINT: 130, syscall.SIGHUP: 129} {
		t.Run(sig.String(), func(t *testing.T) {
			tok := reapertest.NewToken()
			cmd, errb := startHuman(t, tok, nil, "echo ready; sleep 300")
			require.NoError(t, cmd.Process.Signal(sig))
			_ = cmd.Wait() // the exit code is checked
			assert.Equal(t, code, cmd.ProcessState.ExitCode(), "stderr %q", errb)
			assert.Contains(t, errb.String(), "shellsup: cancelled by "+unix.SignalName(sig)+"; cleaning up", "the signal is named")
			assert.Contains(t, errb.String(), "shellsup: cancelled by "+unix.SignalName(sig)+" in ", "the summary names it too")
			reapertest.Check(t, tok)
		})
	}
}

// A second SIGINT or SIGTERM during the grace kills at once: with a
// TERM-ignorer and a 30 s grace, the run ends long before the grace would.
func TestSecondSignalSkipsTheGrace(t *testing.T) {
	for _, second := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(second.String(), func(t *testing.T) {
			var sent time.Time
			r := runShellsup(t, opts{
				args:    []string{"--grace", "30", "--cwd", t.TempDir()},
				command: termIgnorer + "echo ready; wait",
				control: true,
				onFrame: func(r *running, f protocol.Frame) {
					switch f.(type) {
					case *protocol.Progress:
						if r.stdoutSoFar() == "ready\n" && sent.IsZero() {
							r.signal(syscall.SIGTERM)
							sent = time.Now()
						}
					case *protocol.Cancel: // the cleanup has begun: the grace is running
						time.Sleep(200 * time.Millisecond)
						r.signal(second)
					}
				},
			})
			tot := requireTotals(t, r)
			assert.Less(t, time.Since(sent), 20*time.Second, "the second signal did not cut the 30 s grace")
			assert.Equal(t, 143, r.exit, "the first signal decides the exit code")
			assert.Equal(t, protocol.ReasonSignal, tot.CancelReason)
			assert.GreaterOrEqual(t, tot.Cleanup.Killed, 1, "the TERM-ignorer was killed")
		})
	}
}

// Human mode's stdout redirected to a file (spliced into) and appended to
// a file (O_APPEND, where splice may refuse and the bytes are copied): every
// byte arrives either way, after what the file held.
func TestHumanModeToAFile(t *testing.T) {
	for _, redirect := range []string{">", ">>"} {
		t.Run(redirect, func(t *testing.T) {
			tok := reapertest.NewToken()
			file := filepath.Join(t.TempDir(), "out")
			require.NoError(t, os.WriteFile(file, []byte("before\n"), 0o600))
			sh := strconv.Quote(shellsupBin) + " -- 'seq 1 300000' " + redirect + " " + file
			cmd := exec.Command("/bin/bash", "-c", sh)
			cmd.Env = baseEnv(tok)
			errb, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", errb)
			got, err := os.ReadFile(file)
			require.NoError(t, err)
			want := seqText(300000)
			if redirect == ">>" {
				want = "before\n" + want
			}
			assert.Equal(t, want, string(got))
			reapertest.Check(t, tok)
		})
	}
}

// A reader slower than the command: the pipe to it is full again and
// again, and shellsup waits for it rather than dropping or spinning.
func TestHumanModeSlowReader(t *testing.T) {
	tok := reapertest.NewToken()
	cmd := exec.Command(shellsupBin, "--", "seq 1 400000")
	cmd.Env = baseEnv(tok)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var got bytes.Buffer
	buf := make([]byte, 4096)
	for i := 0; ; i++ {
		n, err := out.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			break
		}
		if i%200 == 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	require.NoError(t, cmd.Wait())
	assert.Equal(t, seqText(400000), got.String())
	reapertest.Check(t, tok)
}

// The slow reader's run reports no pipe held open: the tree's pipes
// reached EOF, only shellsup's own stdout was slow.
func TestSlowReaderIsNotAHeldPipe(t *testing.T) {
	tok := reapertest.NewToken()
	cmd := exec.Command(shellsupBin, "--", "seq 1 400000")
	cmd.Env = baseEnv(tok)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	time.Sleep(1500 * time.Millisecond) // past the drain's 500 ms grace, with a full pipe
	got, err := io.ReadAll(out)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait())
	assert.Equal(t, seqText(400000), string(got))
	assert.NotContains(t, errb.String(), "still held open", "summary %q", errb.String())
	reapertest.Check(t, tok)
}

// A pipe reader that stops for longer than the drain's grace and its 1 s
// after the cleanup (a pager) is waited for, as cat would be: it gets every
// byte the command wrote, the summary counts them all, and nothing is said
// held open or not forwarded.
func TestStuckPipeReaderIsWaitedFor(t *testing.T) {
	tok := reapertest.NewToken()
	cmd := exec.Command(shellsupBin, "--timeout", "1", "--grace", "0", "--", "seq 1 400000; sleep 30")
	cmd.Env = baseEnv(tok)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	// The first 200000 bytes are read: past the capture, shellsup is then
	// splicing into the pipe when its reader stops.
	head := make([]byte, 200000)
	_, err = io.ReadFull(out, head)
	require.NoError(t, err)
	proctest.Poll(t, 30*time.Second, "the tree to be killed at the timeout", func() bool {
		return len(reapertest.Find(tok, cmd.Process.Pid)) == 0
	})
	time.Sleep(2500 * time.Millisecond) // past the drain's grace and 1 s more, with a full pipe
	rest, err := io.ReadAll(out)
	require.NoError(t, err)
	got := append(head, rest...)
	require.Error(t, cmd.Wait()) // 124
	assert.Equal(t, 124, cmd.ProcessState.ExitCode())
	m := regexp.MustCompile(`captured (\d+) of (\d+) bytes`).FindStringSubmatch(errb.String())
	require.NotNil(t, m, "summary %q", errb.String())
	assert.Equal(t, strconv.Itoa(len(got)), m[2], "the summary counts what the reader got")
	assert.True(t, strings.HasPrefix(seqText(400000), string(got)), "the reader got something else than a prefix of the output")
	assert.NotContains(t, errb.String(), "held open")
	assert.NotContains(t, errb.String(), "not forwarded")
	reapertest.Check(t, tok)
}

// TestBothStreamsToOneFile: `shellsup … > log 2>&1` with the capture
// spent at once. Past the budget the rest used to be spliced into the
// file, and splice(2) moves a shared file position without write(2)'s
// lock: the two streams overwrote each other's bytes. Every byte of both
// streams is in the file, then the summary.
func TestBothStreamsToOneFile(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log")
	f, err := os.Create(log)
	require.NoError(t, err)
	tok := reapertest.NewToken()
	cmd := exec.Command(shellsupBin, "--budget", "1000", "--", "seq 1 300000 & seq 1 300000 >&2; wait")
	cmd.Env = baseEnv(tok)
	cmd.Stdout, cmd.Stderr = f, f
	require.NoError(t, cmd.Run())
	require.NoError(t, f.Close())
	reapertest.Check(t, tok)
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	want := 2 * len(seqText(300000))
	summary := b[bytes.LastIndex(b, []byte("shellsup: exit 0")):]
	assert.Equal(t, want, len(b)-len(summary), "bytes of the two streams in the file")
	assert.Contains(t, string(summary), fmt.Sprintf("of %d bytes", want))
}
