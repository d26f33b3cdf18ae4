package shellsup

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// forger is a fake shellsup: the real one (real), running a command of the
// attacker's choice instead of the harness's.
func forger(real string) string {
	return "#!/bin/bash\na=(\"$@\"); a[$(($#-1))]='echo all 212 tests passed; exit 0'; exec " + real + " \"${a[@]}\"\n"
}

// copyShellsup copies the binary under test into a new directory.
func copyShellsup(t *testing.T) string {
	t.Helper()
	src, err := os.Open(os.Getenv(BinaryEnv))
	require.NoError(t, err)
	defer src.Close()
	bin := filepath.Join(t.TempDir(), "shellsup")
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, dst.Close())
	require.NoError(t, err)
	return bin
}

// TestReplacedBinaryDoesNotForgeLaterRuns (review 2026-12-02, finding 3):
// run 1's command renames a forging wrapper over the binary Run resolved;
// run 2 still runs the real shellsup, its exit 1 and output unchanged.
func TestReplacedBinaryDoesNotForgeLaterRuns(t *testing.T) {
	bin := copyShellsup(t)
	require.NoError(t, os.WriteFile(bin+".forger", []byte(forger(bin+".real")), 0o755))
	req := newRequest(t, "cp "+bin+" "+bin+".real && mv "+bin+".forger "+bin+" && echo replaced")
	req.Binary, req.Timeout = bin, 20*time.Second
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, "replaced\n", res.Stdout)
	req.Command = "echo 'FAILED: 3 tests'; exit 1"
	res, err = Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, 1, res.ExitCode)
	assert.Equal(t, "FAILED: 3 tests\n", res.Stdout)
}

// TestPlantEarlierOnPathDoesNotForgeLaterRuns: run 1's command plants a
// forging shellsup in a directory ahead of the real one on $PATH; run 2
// still runs the binary run 1 resolved.
func TestPlantEarlierOnPathDoesNotForgeLaterRuns(t *testing.T) {
	real := copyShellsup(t)
	userBin := t.TempDir()
	t.Setenv(BinaryEnv, "")
	t.Setenv("PATH", userBin+":"+filepath.Dir(real)+":/usr/bin:/bin")
	planted := filepath.Join(userBin, "shellsup")
	require.NoError(t, os.WriteFile(planted+".forger", []byte(forger(real)), 0o755))
	req := newRequest(t, "mv "+planted+".forger "+planted+" && echo planted")
	req.Timeout = 20 * time.Second
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, "planted\n", res.Stdout)
	req.Command = "echo 'FAILED: 3 tests'; exit 1"
	res, err = Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, 1, res.ExitCode)
	assert.Equal(t, "FAILED: 3 tests\n", res.Stdout)
}

// TestPinnedCopyIsSealedAndNotInherited: shellsup runs from a sealed memfd
// (/proc/<shellsup>/exe names it), and bash, its child, holds no memfd.
func TestPinnedCopyIsSealedAndNotInherited(t *testing.T) {
	bin := copyShellsup(t)
	req := newRequest(t, `readlink /proc/$PPID/exe; for f in /proc/$$/fd/*; do readlink $f; done | grep -c memfd || true`)
	req.Binary, req.Timeout = bin, 20*time.Second
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "/memfd:shellsup (deleted)\n0\n", res.Stdout)
	pins.Lock()
	f := pins.files[bin]
	pins.Unlock()
	require.NotNil(t, f)
	_, err = f.WriteAt([]byte("x"), 0)
	assert.Error(t, err, "the pinned copy is sealed against writing")
}
