//go:build linux

package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
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

// humanRun runs shellsup in human mode to its end: stdout, stderr, exit.
func humanRun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	tok := reapertest.NewToken()
	cmd := exec.Command(shellsupBin, args...)
	cmd.Env = baseEnv(tok)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run() // the exit code is returned
	reapertest.Check(t, tok)
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// The COMMAND follows "--": `shellsup decod` is refused with a "did you
// mean" (it ran bash "decod", 127), and nothing is spawned.
func TestCommandNeedsDoubleDash(t *testing.T) {
	for argv, want := range map[string][]string{
		`shellsup: unknown word "decod": did you mean "decode"?`:                            {"decod"},
		`shellsup: "echo hi" is not an option or a subcommand: the COMMAND follows --`:      {"--timeout", "5", "echo hi"},
		`shellsup: unknown option "--timout": did you mean "--timeout"?`:                    {"--timout=5", "--", "true"},
		`shellsup: unknown word "version": did you mean "--version"?`:                       {"version"},
		`shellsup: "touch" "made" is not an option or a subcommand: the COMMAND follows --`: {"touch", "made"},
	} {
		dir := t.TempDir()
		cmd := exec.Command(shellsupBin, want...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%v", want)
		assert.Equal(t, 125, ee.ExitCode(), "%v: %s", want, out)
		assert.Contains(t, string(out), argv, "%v", want)
		assert.NoFileExists(t, dir+"/made", "nothing ran")
	}
}

// Every time option takes a duration and every byte option a byte count,
// on the real command line.
func TestDurationsAndSizesOnTheCommandLine(t *testing.T) {
	out, errb, code := humanRun(t, "--timeout", "2s", "--grace", "500ms", "--budget", "64K", "--quiet", "--", "echo ok")
	assert.Equal(t, 0, code, errb)
	assert.Equal(t, "ok\n", out)
	r := runShellsup(t, opts{args: []string{"--timeout", "1m", "--budget", "1K"}, command: "true"})
	require.NotNil(t, r.start, "stderr %q", r.stderr)
	assert.Equal(t, 60.0, r.start.Timeout)
	assert.Equal(t, 1024, r.start.Budget)
	_, errb, code = humanRun(t, "--timeout", "601", "--", "true")
	assert.Equal(t, 125, code)
	assert.Contains(t, errb, "timeout must be greater than 0 and at most 600 seconds (got 601); a longer run is a job: give it a lifetime instead (--lifetime")
	_, errb, _ = humanRun(t, "--grace", "soon", "--", "true")
	assert.Contains(t, errb, `grace must be a duration at least 0 and at most 60 seconds, written as a number of seconds (1.5) or a number with a unit ms, s, m, h or d (500ms, 2s, 1m, 1h30m, 7d) (got "soon")`)
	_, errb, _ = humanRun(t, "--budget", "64Q", "--", "true")
	assert.Contains(t, errb, `budget must be a whole number of bytes, optionally with a K, M, G or T suffix`)
	assert.Contains(t, errb, `(got "64Q")`)
}

// --quiet prints errors only: no "timed out ...; cleaning up" notice and no
// summary, but a refusal and a failed cleanup are still said.
func TestQuietPrintsErrorsOnly(t *testing.T) {
	out, errb, code := humanRun(t, "--quiet", "--timeout", "0.3", "--", "echo out; sleep 30")
	assert.Equal(t, 124, code)
	assert.Equal(t, "out\n", out)
	assert.Empty(t, errb, "no notice, no summary")
	_, errb, code = humanRun(t, "--timeout", "0.3", "--", "sleep 30")
	assert.Equal(t, 124, code)
	assert.Contains(t, errb, "shellsup: timed out after 0.3s; cleaning up", "without --quiet the notice is there")
	_, errb, code = humanRun(t, "--quiet", "--timeout", "0", "--", "true")
	assert.Equal(t, 125, code)
	assert.Equal(t, "shellsup: timeout must be greater than 0 and at most 600 seconds (got 0)\n", errb)
}

// A closed stdout (shellsup ... | head -1) ends the run as a pipeline's
// SIGPIPE does: exit 141, one line on stderr (none with --quiet).
func TestClosedStdoutIsABrokenPipe(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		tok := reapertest.NewToken()
		args := []string{"--", "yes"}
		if quiet {
			args = append([]string{"--quiet"}, args...)
		}
		cmd := exec.Command(shellsupBin, args...)
		cmd.Env = baseEnv(tok)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		require.NoError(t, cmd.Start())
		line, err := readLine(bufio.NewReader(out), 10*time.Second)
		require.NoError(t, err)
		assert.Equal(t, "y\n", line)
		out.Close() // head -1 is done
		_ = cmd.Wait()
		assert.Equal(t, 141, cmd.ProcessState.ExitCode(), "stderr %q", errb.String())
		if quiet {
			assert.Empty(t, errb.String())
		} else {
			assert.Regexp(t, `^shellsup: broken pipe \(the reader of shellsup's output is gone\) in [0-9.]+s; [^\n]*\n$`, errb.String())
		}
		reapertest.Check(t, tok)
	}
}

// A parent already gone when shellsup starts (`bash -c "shellsup -- CMD &
// exit 0"`) is handled one way every time: the run is cancelled at once
// with parent-gone (exit 130), as when the parent dies later (`sleep 0.2;
// exit`). Before, the first ran CMD to its end (shellsup read its parent
// after the adoption and watched the adopter), the second was cancelled.
// bash runs in a session of its own, so the adopter (this test, a
// subreaper) is in another session than shellsup.
func TestParentGoneAtStartIsCancelledEveryTime(t *testing.T) {
	for _, ending := range []string{"exit 0", "sleep 0.2; exit 0"} {
		for i := 0; i < 10; i++ {
			dir := t.TempDir()
			marker, errFile := filepath.Join(dir, "done"), filepath.Join(dir, "err")
			tok := reapertest.NewToken()
			caller := exec.Command("/bin/bash", "-c", `"$0" --timeout 30 -- "sleep 5; touch $1" </dev/null >/dev/null 2>"$2" & echo $!; `+ending,
				shellsupBin, marker, errFile)
			caller.Env = baseEnv(tok)
			caller.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			out, err := caller.Output()
			require.NoError(t, err)
			sup, err := strconv.Atoi(strings.TrimSpace(string(out)))
			require.NoError(t, err, "caller said %q", out)
			var ws unix.WaitStatus
			exited := proctest.Await(10*time.Second, func() bool {
				pid, err := unix.Wait4(sup, &ws, unix.WNOHANG, nil) // shellsup, adopted by this subreaper
				return pid == sup || err != nil
			})
			require.True(t, exited, "%s #%d: shellsup %d still runs", ending, i, sup)
			b, _ := os.ReadFile(errFile)
			require.True(t, ws.Exited(), "%s #%d: %v; stderr %q", ending, i, ws, b)
			assert.Equal(t, 130, ws.ExitStatus(), "%s #%d: stderr %q", ending, i, b)
			assert.Contains(t, string(b), "shellsup: cancelled (parent-gone) in ", "%s #%d", ending, i)
			assert.NoFileExists(t, marker, "%s #%d: CMD must not run to its end", ending, i)
			reapertest.Check(t, tok)
		}
	}
}

// `--spill ~/.cache/shellsup` works on a fresh home: the missing directory
// and its missing parents are made, 0700, and the run spills into it.
func TestSpillMakesAMissingDirectory(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".cache", "shellsup")
	r := runShellsup(t, opts{args: []string{"--spill", dir}, command: "echo spilled"})
	tot := requireTotals(t, r)
	require.NotNil(t, tot.Spill, "stderr %q", r.stderr)
	assert.Equal(t, dir, filepath.Dir(tot.Spill.Dir))
	b, err := os.ReadFile(filepath.Join(tot.Spill.Dir, "stdout"))
	require.NoError(t, err)
	assert.Equal(t, "spilled\n", string(b))
	for _, d := range []string{filepath.Join(home, ".cache"), dir} {
		st, err := os.Lstat(d)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), st.Mode().Perm(), d)
		assert.EqualValues(t, os.Geteuid(), st.Sys().(*syscall.Stat_t).Uid, d)
	}
}
