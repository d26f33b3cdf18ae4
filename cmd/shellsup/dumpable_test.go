//go:build linux

package main

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
)

// nobodyShellsup copies the binary under test into a directory user nobody
// can enter and returns that directory and a wrapper that execs the copy
// as nobody (uid and gid 65534, no groups) with its stdout on a pipe of
// nobody's.
func nobodyShellsup(t *testing.T) (dir, wrapper string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "shellsup-nobody-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	src, err := os.Open(proctest.Unwrapped(shellsupBin))
	require.NoError(t, err)
	defer src.Close()
	bin := filepath.Join(dir, "shellsup")
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
	wrapper = filepath.Join(dir, "as-nobody")
	// shellsup's stdout is a pipe of nobody's own, as it would be under
	// a caller of the same user: a pipe made by root is closed to nobody
	// whatever shellsup does.
	script := "#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups /bin/bash -c 'set -o pipefail; \"$0\" \"$@\" | cat' " +
		strconv.Quote(bin) + ` "$@"` + "\n"
	require.NoError(t, os.WriteFile(wrapper, []byte(script), 0o755))
	return dir, wrapper
}

// TestUnprivilegedCommandCannotReachShellsup: shellsup and its command run
// as the same unprivileged user, yet the command can neither open
// shellsup's fds through /proc (to forge frames or hold its control pipe
// open), nor read its memory, nor ptrace it — while its own processes stay
// ordinary: bash's child's fds are open to it as usual.
func TestUnprivilegedCommandCannotReachShellsup(t *testing.T) {
	dir, wrapper := nobodyShellsup(t)
	command := strings.Join([]string{
		`id -u`,
		`if exec 3>/proc/$PPID/fd/1; then echo fd1=opened; else echo fd1=refused; fi`,
		`if cat /proc/$PPID/fd/0 </dev/null >/dev/null; then echo fd0=opened; else echo fd0=refused; fi`,
		`if exec 4</proc/$PPID/mem; then echo mem=opened; else echo mem=refused; fi`,
		// strace runs until timeout ends it (124) if it could attach.
		`timeout 3 strace -qq -e trace=none -p $PPID 2>/dev/null; if [ $? = 124 ]; then echo ptrace=attached; else echo ptrace=refused; fi`,
		`sleep 5 & if ls /proc/$!/fd >/dev/null; then echo child=ok; else echo child=refused; fi; kill $!`,
	}, "\n")
	r := runShellsup(t, opts{bin: wrapper, args: []string{"--cwd", dir}, command: command, env: []string{"HOME=" + dir}})
	tot := requireTotals(t, r)
	assert.Equal(t, "65534\nfd1=refused\nfd0=refused\nmem=refused\nptrace=refused\nchild=ok\n", tot.Stdout, "stderr %q", tot.Stderr)
	assert.Contains(t, tot.Stderr, "Permission denied")
	assert.Equal(t, 0, r.exit)
}

// TestRootCommandCanReachShellsup is the control: a root command (root
// ignores dumpability) opens /proc/$PPID/fd/1, so the test above can fail.
func TestRootCommandCanReachShellsup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	r := runShellsup(t, opts{command: `if exec 3>/proc/$PPID/fd/1; then echo fd1=opened; else echo fd1=refused; fi`})
	tot := requireTotals(t, r)
	assert.Equal(t, "fd1=opened\n", tot.Stdout)
}
