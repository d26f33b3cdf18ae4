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

// TestExecRefusedByKernel: shellsup itself execs, but the kernel refuses
// bash, because bash's environment also carries PWD, the long working
// directory. shellsup reports exec_failed naming the reason and the sizes.
func TestExecRefusedByKernel(t *testing.T) {
	var rl unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_STACK, &rl))
	limit := max(min(int(rl.Cur/4), 6<<20), 128<<10)

	// A working directory of ~3.8 KB, as nested 200-byte names.
	dir := t.TempDir()
	for len(dir) < 3800 {
		dir = filepath.Join(dir, strings.Repeat("d", 200))
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))

	tok := reapertest.NewToken()
	env := []string{tok.Env(), "HOME=" + cleanHome, "PATH=" + os.Getenv("PATH")}
	bin := proctest.Unwrapped(shellsupBin)
	argv := []string{bin, "--frames", "--", "true"}
	// Pad the environment until shellsup's own exec sits 1000 bytes under
	// the limit; bash's, with PWD=dir added, is then ~2800 bytes over.
	for i := 0; execSize(bin, argv, env) < limit-1000; i++ {
		room := limit - 1000 - execSize(bin, argv, env) - 8 - len("PADxxxx=") - 1
		env = append(env, fmt.Sprintf("PAD%04d=%s", i, strings.Repeat("p", max(0, min(room, 100<<10)))))
	}
	cmd := exec.Command(bin, argv[1:]...)
	cmd.Env = env
	cmd.Dir = dir
	raw, err := cmd.Output()
	require.Error(t, err)
	assert.Equal(t, 126, cmd.ProcessState.ExitCode())
	r := decodeAll(t, raw)
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
// the timeout fires. The stop-and-kill loop must converge.
func TestFastForker(t *testing.T) {
	r := runShellsup(t, opts{
		args:    []string{"--timeout", "0.5", "--grace", "0.2"},
		command: "trap '' TERM; echo ready; i=0; while [ $i -lt 4000 ]; do (sleep 0.05 &); i=$((i+1)); done; echo finished",
	})
	tot := requireTotals(t, r)
	assert.True(t, tot.TimedOut)
	assert.NotContains(t, tot.Stdout, "finished", "the forker ran to its cap: the test did not race the cleanup")
	assert.GreaterOrEqual(t, tot.Cleanup.Killed, 1)
}
