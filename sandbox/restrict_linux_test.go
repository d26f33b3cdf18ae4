package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRestrictThreadOnly: Restrict binds the calling thread and what it
// forks (syscall.ForkExec forks from the thread it is called on), never
// the process's other threads.
func TestRestrictThreadOnly(t *testing.T) {
	if Probe().LandlockABI < MinABIFS {
		t.Skipf("needs Landlock ABI %d (this kernel: %+v)", MinABIFS, Probe())
	}
	dir, tmp := t.TempDir(), t.TempDir()
	type result struct {
		own, child error
		status     syscall.WaitStatus
	}
	done := make(chan result, 1)
	go OnThread(func() {
		var r result
		if err := Restrict(&Policy{Mode: ModeReadOnly, TmpDir: tmp}); err != nil {
			r.own = err
			done <- r
			return
		}
		r.own = os.WriteFile(filepath.Join(dir, "thread"), nil, 0o644)
		pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", `echo x 2>/dev/null > "$0/child"; echo x > "$1/child"`, dir, tmp},
			&syscall.ProcAttr{Env: []string{"PATH=/usr/bin:/bin"}, Files: []uintptr{0, 1, 2}})
		if err == nil {
			_, r.child = syscall.Wait4(pid, &r.status, 0, nil)
		} else {
			r.child = err
		}
		done <- r
	})
	r := <-done
	assert.True(t, errors.Is(r.own, os.ErrPermission), "the restricted thread wrote: %v", r.own)
	require.NoError(t, r.child)
	assert.NoFileExists(t, filepath.Join(dir, "child"), "the child inherits the rules")
	assert.FileExists(t, filepath.Join(tmp, "child"), "the private TMPDIR stays writable")
	assert.NoError(t, os.WriteFile(filepath.Join(dir, "other-thread"), nil, 0o644), "the other threads stay free")
}

// TestOnThreadNeverMain: run never runs on the main thread, whichever
// thread the goroutine started on (the test's own main goroutine is
// locked to the main thread for the test binary's init; a locked goroutine
// asks OnThread from there).
func TestOnThreadNeverMain(t *testing.T) {
	for i := 0; i < 200; i++ {
		var tid int
		OnThread(func() { tid = syscall.Gettid() })
		require.NotEqual(t, syscall.Getpid(), tid)
	}
	done := make(chan int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var tid int
		OnThread(func() { tid = syscall.Gettid() })
		done <- tid
	}()
	assert.NotEqual(t, syscall.Getpid(), <-done)
}
