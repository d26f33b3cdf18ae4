package supervisor

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/protocol"
)

// cancels collects the reasons watchParent gives.
func cancels() (chan string, func(string)) {
	ch := make(chan string, 4)
	return ch, func(r string) { ch <- r }
}

// TestWatchParentReaderGone: shellsup's stdout, a pipe or a socket (the
// bindings' socketpair), loses its reader: the run is cancelled at once,
// without waiting for a write to fail.
func TestWatchParentReaderGone(t *testing.T) {
	for _, kind := range []string{"pipe", "socket"} {
		t.Run(kind, func(t *testing.T) {
			r, w := streamPair(t, kind)
			defer w.Close()
			ch, cancel := cancels()
			stop := watchParent(os.Getppid(), Stdio{Stdout: w}, cancel)
			defer stop()
			select {
			case reason := <-ch:
				t.Fatalf("cancelled (%s) while the reader is there", reason)
			case <-time.After(50 * time.Millisecond):
			}
			r.Close()
			select {
			case reason := <-ch:
				assert.Equal(t, reasonOutputGone, reason, "the session makes it parent-gone in frames mode, a broken pipe in human mode")
			case <-time.After(10 * time.Second):
				t.Fatal("the hang-up was not seen")
			}
		})
	}
}

// streamPair is a pipe or a connected socketpair: its reading end, then
// its writing end.
func streamPair(t *testing.T, kind string) (*os.File, *os.File) {
	if kind == "pipe" {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		return r, w
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	return os.NewFile(uintptr(fds[0]), "reader"), os.NewFile(uintptr(fds[1]), "writer")
}

func TestWatchParentAlreadyReparented(t *testing.T) {
	ch, cancel := cancels()
	stop := watchParent(os.Getppid()+1, Stdio{}, cancel) // not the parent any more: it died since
	defer stop()
	select {
	case reason := <-ch:
		assert.Equal(t, protocol.ReasonParentGone, reason)
	case <-time.After(10 * time.Second):
		t.Fatal("a parent that changed was not seen")
	}
}

func TestWatchParentStops(t *testing.T) {
	ch, cancel := cancels()
	stop := watchParent(os.Getppid(), Stdio{Stdout: os.Stdout, Stderr: os.Stderr}, cancel)
	done := make(chan struct{})
	go func() { stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("stop did not end the watch")
	}
	assert.Empty(t, ch)
}
