package supervisor

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/protocol"
)

// cancels collects the reasons watchParent gives.
func cancels() (chan string, func(string)) {
	ch := make(chan string, 4)
	return ch, func(r string) { ch <- r }
}

func TestWatchParentReaderGone(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
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
		assert.Equal(t, protocol.ReasonParentGone, reason)
	case <-time.After(10 * time.Second):
		t.Fatal("the hang-up was not seen")
	}
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
