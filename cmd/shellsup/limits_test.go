//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// execSize is what execve counts against its limit (fs/exec.c): the
// filename, every argument and environment string with its NUL, and a
// pointer for each string.
func execSize(filename string, argv, env []string) int {
	n := len(filename) + 1 + 8*(len(argv)+len(env))
	for _, s := range append(append([]string{}, argv...), env...) {
		n += len(s) + 1
	}
	return n
}

// execRefused runs shellsup (with options) with an environment padded until
// shellsup's own exec sits 1000 bytes under the kernel's limit, in a working
// directory of ~3.8 KB (nested 200-byte names): bash's exec, whose
// environment also carries PWD, is then ~2800 bytes over and is refused. It
// returns the frames decoded, the exit code, the environment and the limit.
func execRefused(t *testing.T, tok reapertest.Token, options ...string) (result, int, []string, int) {
	t.Helper()
	var rl unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_STACK, &rl))
	limit := max(min(int(rl.Cur/4), 6<<20), 128<<10)
	dir := t.TempDir()
	for len(dir) < 3800 {
		dir = filepath.Join(dir, strings.Repeat("d", 200))
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	env := []string{tok.Env(), "HOME=" + cleanHome, "PATH=" + os.Getenv("PATH")}
	bin := proctest.Unwrapped(shellsupBin)
	argv := append(append([]string{bin, "--frames"}, options...), "--", "true")
	for i := 0; execSize(bin, argv, env) < limit-1000; i++ {
		room := limit - 1000 - execSize(bin, argv, env) - 8 - len("PADxxxx=") - 1
		env = append(env, fmt.Sprintf("PAD%04d=%s", i, strings.Repeat("p", max(0, min(room, 100<<10)))))
	}
	cmd := exec.Command(bin, argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	raw, _ := cmd.Output() // exits 126: the code is checked by the caller
	return decodeAll(t, raw), cmd.ProcessState.ExitCode(), env, limit
}

// TestExecRefusedByKernel: shellsup itself execs, but the kernel refuses
// bash, because bash's environment also carries PWD, the long working
// directory. shellsup reports exec_failed naming the reason and the sizes.
func TestExecRefusedByKernel(t *testing.T) {
	tok := reapertest.NewToken()
	r, code, env, limit := execRefused(t, tok)
	assert.Equal(t, 126, code)
	require.NotNil(t, r.errf, "frames %v", r.frameTypes())
	assert.Equal(t, protocol.CategoryExecFailed, r.errf.Category)
	assert.Contains(t, r.errf.Message, "E2BIG")
	assert.Contains(t, r.errf.Message, "argument list too long")
	assert.Contains(t, r.errf.Message, fmt.Sprintf("%d variables", len(env)+1))
	assert.Contains(t, r.errf.Message, fmt.Sprintf("%d bytes of arguments and environment in all", limit))
	reapertest.Check(t, tok)
}

func decodeAll(t *testing.T, raw []byte) result {
	t.Helper()
	var r result
	dec := protocol.NewDecoder(strings.NewReader(string(raw)))
	for {
		var f protocol.Frame
		if err := dec.Decode(&f); err != nil {
			break
		}
		r.frames = append(r.frames, f)
		if e, ok := f.(*protocol.Error); ok {
			r.errf = e
		}
	}
	return r
}

// TestFastForker: a TERM-ignoring loop forks short-lived orphans as fast as
// it can (at most 4000 iterations, so at most 8000 processes in all) when
// the run is cancelled. The stop-and-kill loop must converge. The cancel
// comes once the loop says "ready": a timeout could fire before a loaded
// machine has run bash's trap, and SIGTERM would end the test's premise.
func TestFastForker(t *testing.T) {
	r := runShellsup(t, opts{
		args:    []string{"--grace", "0.2"},
		command: "trap '' TERM; echo ready; i=0; while [ $i -lt 4000 ]; do (sleep 0.05 &); i=$((i+1)); done; echo finished",
		control: true,
		onFrame: onReady(func(r *running) { _ = r.send(&protocol.Cancel{}) }),
	})
	tot := requireTotals(t, r)
	assert.True(t, tot.Cancelled)
	assert.NotContains(t, tot.Stdout, "finished", "the forker ran to its cap: the test did not race the cleanup")
	assert.GreaterOrEqual(t, tot.Cleanup.Killed, 1)
}
