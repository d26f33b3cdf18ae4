//go:build linux

package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// seededBytes is n deterministic bytes of every value (binary, invalid
// UTF-8, NULs, newlines), from a fixed seed.
func seededBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// spillDir is a private directory (0700) for spill tests.
func spillDir(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "spill")
	require.NoError(t, os.Mkdir(dir, 0o700))
	return dir
}

// TestSpillHoldsEveryRawByte: 5 MiB of binary on stdout and 80 KiB on
// stderr, in bursts, far past the budget: the spill files equal the bytes
// the command wrote, and totals count them per stream.
func TestSpillHoldsEveryRawByte(t *testing.T) {
	src := t.TempDir()
	out, errb := seededBytes(5<<20, 1), seededBytes(20*4096, 2)
	require.NoError(t, os.WriteFile(filepath.Join(src, "out"), out, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "err"), errb, 0o644))
	dir := spillDir(t)
	// dd reads exactly bs bytes of a regular file per block: 20 bursts.
	r := runShellsup(t, opts{
		args: []string{"--spill", dir, "--cwd", src},
		command: `exec 3<out 4<err; for i in $(seq 20); do
			dd bs=262144 count=1 status=none <&3; dd bs=4096 count=1 status=none <&4 >&2; sleep 0.01; done`,
	})
	tot := requireTotals(t, r)
	require.Equal(t, 0, *tot.ExitCode, "stderr %q", tot.Stderr)
	require.NotNil(t, tot.Spill)
	sp := tot.Spill
	assert.Equal(t, r.start.Spill, sp.Dir, "the start frame names the same directory")
	assert.Equal(t, dir, filepath.Dir(sp.Dir))
	assert.True(t, strings.HasPrefix(filepath.Base(sp.Dir), "shellsup-"), sp.Dir)
	assert.Equal(t, filepath.Join(sp.Dir, "stdout"), sp.Stdout)
	assert.Equal(t, filepath.Join(sp.Dir, "stderr"), sp.Stderr)

	gotOut, err := os.ReadFile(sp.Stdout)
	require.NoError(t, err)
	gotErr, err := os.ReadFile(sp.Stderr)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(out, gotOut), "stdout spill differs: %d bytes, want %d", len(gotOut), len(out))
	assert.True(t, bytes.Equal(errb, gotErr), "stderr spill differs: %d bytes, want %d", len(gotErr), len(errb))

	assert.Equal(t, int64(len(out)), tot.StdoutBytes)
	assert.Equal(t, int64(len(errb)), tot.StderrBytes)
	assert.Equal(t, tot.StdoutBytes+tot.StderrBytes, tot.TotalBytes)
	assert.Equal(t, int64(len(out)), sp.StdoutWritten)
	assert.Equal(t, int64(len(errb)), sp.StderrWritten)
	assert.Zero(t, sp.StdoutDropped+sp.StderrDropped)
	assert.False(t, sp.Cut)
	assert.True(t, tot.Truncated, "the capture is still bounded by the budget")
	assert.LessOrEqual(t, tot.CapturedBytes, int64(65536))

	st, err := os.Stat(sp.Dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm(), "spill directory mode")
	for _, f := range []string{sp.Stdout, sp.Stderr} {
		st, err := os.Stat(f)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "%s mode", f)
	}
}

// TestSpillMaxCutsAndCounts: past --spill-max the bytes are counted and
// dropped, and the file holds exactly the first ones.
func TestSpillMaxCutsAndCounts(t *testing.T) {
	src := t.TempDir()
	data := seededBytes(1<<20, 3)
	require.NoError(t, os.WriteFile(filepath.Join(src, "data"), data, 0o644))
	r := runShellsup(t, opts{args: []string{"--spill", spillDir(t), "--spill-max", "100K", "--cwd", src}, command: "cat data; cat data >&2"})
	tot := requireTotals(t, r)
	sp := tot.Spill
	require.NotNil(t, sp)
	for _, f := range []string{sp.Stdout, sp.Stderr} {
		got, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(data[:100<<10], got), "%s: %d bytes", f, len(got))
	}
	assert.Equal(t, int64(100<<10), sp.StdoutWritten)
	assert.Equal(t, int64(100<<10), sp.StderrWritten)
	assert.Equal(t, int64(len(data)-100<<10), sp.StdoutDropped)
	assert.Equal(t, int64(len(data)-100<<10), sp.StderrDropped)
	assert.True(t, sp.Cut)
	assert.Equal(t, int64(len(data)), tot.StdoutBytes)
	assert.Equal(t, int64(len(data)), tot.StderrBytes)
}

// TestSpillMaxAcceptsEveryByteSuffix: --spill-max takes every byte count
// --max-memory takes (T, a trailing B or iB), and 0, which keeps no byte.
// The rule that won when the two parsers were made one: the wider suffixes
// of --max-memory, the minimum 0 of --spill-max.
func TestSpillMaxAcceptsEveryByteSuffix(t *testing.T) {
	for arg, written := range map[string]int64{"1T": 5, "64MiB": 5, "1kb": 5, "0": 0} {
		t.Run(arg, func(t *testing.T) {
			r := runShellsup(t, opts{args: []string{"--spill", spillDir(t), "--spill-max", arg}, command: "printf hello"})
			tot := requireTotals(t, r)
			require.Equal(t, 0, *tot.ExitCode, "stderr %q", tot.Stderr)
			require.NotNil(t, tot.Spill)
			assert.Equal(t, written, tot.Spill.StdoutWritten)
			assert.Equal(t, 5-written, tot.Spill.StdoutDropped)
			assert.Equal(t, written == 0, tot.Spill.Cut)
			got, err := os.ReadFile(tot.Spill.Stdout)
			require.NoError(t, err)
			assert.Equal(t, "hello"[:written], string(got))
		})
	}
}

// Without --spill there is no spill key, and the byte counts are there.
func TestNoSpillByDefault(t *testing.T) {
	r := runShellsup(t, opts{command: "printf abc; printf de >&2"})
	tot := requireTotals(t, r)
	assert.Nil(t, tot.Spill)
	assert.Empty(t, r.start.Spill)
	assert.Equal(t, int64(3), tot.StdoutBytes)
	assert.Equal(t, int64(2), tot.StderrBytes)
}

func TestSpillRefusals(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	open := filepath.Join(base, "open")
	require.NoError(t, os.Mkdir(open, 0o700))
	require.NoError(t, os.Chmod(open, 0o777))
	group := filepath.Join(base, "group")
	require.NoError(t, os.Mkdir(group, 0o700))
	require.NoError(t, os.Chmod(group, 0o770))
	link := filepath.Join(base, "link")
	require.NoError(t, os.Symlink(spillDir(t), link))
	good := spillDir(t)
	rows := []struct {
		name string
		args []string
		msg  string
	}{
		{"cannot be made", []string{"--spill", file + "/sub/dir"}, `spill directory "` + file + `/sub/dir" cannot be used: not a directory`},
		{"a file", []string{"--spill", file}, `spill directory "` + file + `" is not a directory`},
		{"world-writable", []string{"--spill", open}, `spill directory "` + open + `" is writable by group or others (mode 0777)`},
		{"group-writable", []string{"--spill", group}, "(mode 0770)"},
		{"symlink", []string{"--spill", link}, `spill directory "` + link + `" is a symbolic link`},
		{"spill-max without spill", []string{"--spill-max", "1M"}, `--spill-max "1M" needs --spill DIR`},
		{"spill-max abc", []string{"--spill", good, "--spill-max", "abc"}, `(got "abc")`},
		{"spill-max negative", []string{"--spill", good, "--spill-max", "-1"}, `(got "-1")`},
		// "1T" was refused here once; --spill-max now reads byte counts as
		// --max-memory does (request.ParseBytes): TestSpillMaxAcceptsEveryByteSuffix.
		{"spill-max bad suffix", []string{"--spill", good, "--spill-max", "12X"}, `--spill-max must be a whole number of bytes, optionally with a K, M, G or T suffix (powers of 1024; a trailing B or iB is allowed), e.g. 64M, at least 0 and at most 2^62 (got "12X")`},
		{"spill-max overflow", []string{"--spill", good, "--spill-max", "9999999999999G"}, `(got "9999999999999G")`},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "spawned")
			r := runShellsup(t, opts{args: row.args, command: "touch " + marker})
			assertRefused(t, r, protocol.CategoryValidation, row.msg, marker)
		})
	}
	entries, err := os.ReadDir(good)
	require.NoError(t, err)
	assert.Empty(t, entries, "a refused run made no spill directory")
}

// TestSpillNotWritableAsNobody: a directory of root's (only root may
// write it) is refused for shellsup running as nobody, for real: it is not
// shellsup's user's.
func TestSpillNotWritableAsNobody(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run shellsup as nobody")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv not installed")
	}
	// nobody needs to reach the binary and a working directory of its own.
	bin := filepath.Join(t.TempDir(), "shellsup")
	data, err := os.ReadFile(proctest.Unwrapped(shellsupBin))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	for d := filepath.Dir(bin); d != "/"; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		require.NoError(t, err)
		if st.Mode().Perm()&0o001 == 0 {
			require.NoError(t, os.Chmod(d, st.Mode().Perm()|0o001))
		}
	}
	rootOnly := filepath.Join(filepath.Dir(bin), "root-only")
	require.NoError(t, os.Mkdir(rootOnly, 0o755))
	marker := filepath.Join(filepath.Dir(bin), "spawned")
	cmd := exec.Command(setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups",
		bin, "--cwd", "/", "--spill", rootOnly, "--", "touch "+marker)
	cmd.Env = []string{"HOME=/nonexistent", "PATH=/usr/bin:/bin"}
	out, _ := cmd.CombinedOutput()
	assert.Equal(t, 125, cmd.ProcessState.ExitCode(), "output %q", out)
	assert.Contains(t, string(out), `shellsup: spill directory "`+rootOnly+`" is owned by uid 0, not shellsup's (uid 65534)`)
	assert.NoFileExists(t, marker)
	// A missing directory is made as shellsup's user, who must be allowed to.
	cmd = exec.Command(setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups",
		bin, "--cwd", "/", "--spill", rootOnly+"/cache/shellsup", "--", "touch "+marker)
	cmd.Env = []string{"HOME=/nonexistent", "PATH=/usr/bin:/bin"}
	out, _ = cmd.CombinedOutput()
	assert.Equal(t, 125, cmd.ProcessState.ExitCode(), "output %q", out)
	assert.Contains(t, string(out), `shellsup: spill directory "`+rootOnly+`/cache/shellsup" does not exist and cannot be made: mkdir `+rootOnly+`/cache: permission denied`)
	assert.NoFileExists(t, marker)
	assert.NoDirExists(t, rootOnly+"/cache")
}

// When bash cannot start, the spill directory made for the run is removed.
// As in TestExecRefusedByKernel, the kernel refuses bash (not shellsup)
// because bash's environment also carries PWD, a long working directory.
func TestSpillRemovedWhenBashCannotStart(t *testing.T) {
	spill := spillDir(t)
	tok := reapertest.NewToken()
	r, code, _, _ := execRefused(t, tok, "--spill", spill)
	assert.Equal(t, 126, code)
	require.NotNil(t, r.errf, "frames %v", r.frameTypes())
	assert.Equal(t, protocol.CategoryExecFailed, r.errf.Category)
	entries, err := os.ReadDir(spill)
	require.NoError(t, err)
	assert.Empty(t, entries, "a run that never started leaves no spill")
	reapertest.Check(t, tok)
}
