//go:build linux

package reaper

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLeaderDoneSeesAnUnreapedExit: the tie rule's building block. While
// the Waiter is pinned it reaps nothing, so an exited leader stays a zombie
// and LeaderExited stays open, exactly the moment a timer can fire in;
// LeaderDone still says the leader exited.
func TestLeaderDoneSeesAnUnreapedExit(t *testing.T) {
	w, _ := tree(t, "read -t 30 <> <(:) || exit 0") // runs until told
	assert.False(t, w.LeaderDone(), "a running leader")
	w.Pin(func() {
		d := procDir{root: "/proc"}
		require.NoError(t, kill(w.leader, 15))
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			p, err := d.stat(w.leader)
			require.NoError(t, err, "pinned: the leader cannot be reaped")
			if p.state == 'Z' {
				break
			}
			require.True(t, time.Now().Before(deadline), "the leader never exited")
		}
		select {
		case <-w.LeaderExited():
			t.Fatal("reaped while pinned")
		default:
		}
		assert.True(t, w.LeaderDone(), "exited, not reaped yet")
	})
	<-w.LeaderExited()
	assert.True(t, w.LeaderDone(), "exited and reaped")
	<-w.Empty()
}

// TestChildStateTellsAZombie: the cleanup leaves an exited child alone (no
// signal reaches a zombie). Pinned, an exited leader stays a zombie and
// childState says exited; running, it says live; reaped, not a child.
func TestChildStateTellsAZombie(t *testing.T) {
	w, _ := tree(t, "read -t 30 <> <(:) || exit 0") // runs until told
	w.Pin(func() {
		assert.Equal(t, liveChild, w.childState(w.leader), "a running leader")
		require.NoError(t, kill(w.leader, 15))
		for deadline := time.Now().Add(10 * time.Second); w.childState(w.leader) != exitedChild; time.Sleep(time.Millisecond) {
			require.True(t, time.Now().Before(deadline), "the leader never showed as exited")
		}
		d := procDir{root: "/proc"}
		p, err := d.stat(w.leader)
		require.NoError(t, err, "pinned: the leader cannot be reaped")
		assert.Equal(t, byte('Z'), p.state, "exited means a zombie")
	})
	<-w.LeaderExited()
	assert.Equal(t, notChild, w.childState(w.leader), "reaped")
	<-w.Empty()
}

// TestLeaderStatusIsRecordedOnce: once bash is reaped its pid is free,
// and an orphan that takes it later (pid reuse) is reaped under the same
// pid. The leader's status is the first reaped under that pid and is never
// overwritten: the later reap is recorded here as the Waiter's loop would.
func TestLeaderStatusIsRecordedOnce(t *testing.T) {
	w, _ := tree(t, "exit 3")
	select {
	case <-w.LeaderExited():
	case <-time.After(10 * time.Second):
		t.Fatal("the leader was not reaped")
	}
	require.Equal(t, 3, w.LeaderStatus().ExitStatus())
	assert.False(t, w.record(w.leader, unix.WaitStatus(9)), "a later child under the leader's pid is not the leader") // killed by SIGKILL
	assert.Equal(t, 3, w.LeaderStatus().ExitStatus(), "the leader's status stands")
	assert.False(t, w.LeaderStatus().Signaled())
}
