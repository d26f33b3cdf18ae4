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

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/protocol"
)

// TestRequirePidnsWithPidns: --require pidns is met by --pidns (the tier
// is added at the spawn, after the check), and refused without it.
func TestRequirePidnsWithPidns(t *testing.T) {
	r := runShellsup(t, opts{args: []string{"--pidns", "--require", "pidns"}, command: "cat /proc/1/comm"})
	tot := requireTotals(t, r)
	assert.Equal(t, "shellsup-init\n", tot.Stdout)
	assert.True(t, strings.HasPrefix(r.start.Containment, "pidns+"), r.start.Containment)
}

// TestRedactReleasesTheLastLine: a last line with no newline, held by the
// redactor until the stream ends, is captured at EOF (redacted), in every
// capture mode.
func TestRedactReleasesTheLastLine(t *testing.T) {
	for _, mode := range []string{"head", "tail"} {
		r := runShellsup(t, opts{args: []string{"--redact", "--capture", mode}, command: "printf 'hello\\nkey AKIAIOSFODNN7EXAMPLE tail'"})
		tot := requireTotals(t, r)
		assert.Equal(t, "hello\nkey [REDACTED:aws-access-key-id] tail", tot.Stdout, mode)
		assert.Equal(t, 1, tot.Redactions, mode)
	}
}

// TestPidnsMaxProcsFloor: the namespace's init counts its own threads, so
// --max-procs under --pidns has a higher floor, refused up front.
func TestPidnsMaxProcsFloor(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "spawned")
	r := runShellsup(t, opts{args: []string{"--pidns", "--max-procs", "5"}, command: "touch " + marker})
	assertRefused(t, r, protocol.CategoryValidation, `max-procs must be at least 16 with --pidns`, marker)
}

// TestSpillFailureLeavesNothing: whatever fd limit makes the spill fail
// half-way, the run is refused (125) and no spill directory is left.
func TestSpillFailureLeavesNothing(t *testing.T) {
	bin := proctest.Unwrapped(shellsupBin)
	for n := 8; n <= 20; n++ {
		dir := t.TempDir()
		require.NoError(t, os.Chmod(dir, 0o700))
		cmd := exec.Command("/bin/bash", "-c", fmt.Sprintf("ulimit -n %d; exec %q --spill %q -- true", n, bin, dir))
		cmd.Env = append(os.Environ(), "HOME="+cleanHome)
		out, err := cmd.CombinedOutput()
		entries, _ := os.ReadDir(dir)
		if err == nil {
			assert.Len(t, entries, 1, "ulimit %d: a run that worked keeps its spill", n)
			continue
		}
		assert.Empty(t, entries, "ulimit %d: a refused run leaves no spill directory (%s)", n, out)
	}
}
