package supervisor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper"
)

func TestStatusOf(t *testing.T) {
	rows := []struct {
		name   string
		status unix.WaitStatus
		code   int
		signal string
	}{
		{"exit 0", 0, 0, ""},
		{"exit 1", 1 << 8, 1, ""},
		{"exit 255", 255 << 8, 255, ""},
		{"SIGTERM", unix.WaitStatus(unix.SIGTERM), 143, "SIGTERM"},
		{"SIGKILL", unix.WaitStatus(unix.SIGKILL), 137, "SIGKILL"},
		{"SIGSEGV with core", unix.WaitStatus(unix.SIGSEGV) | 0x80, 139, "SIGSEGV"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			code, sig := statusOf(row.status)
			assert.Equal(t, row.code, *code)
			if row.signal == "" {
				assert.Nil(t, sig)
			} else {
				assert.Equal(t, row.signal, *sig)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	three := 3
	clean := reaper.Report{}
	dirty := reaper.Report{Stragglers: []reaper.Straggler{{Pid: 9}}}
	tot := &protocol.Totals{Result: protocol.Result{ExitCode: &three}}
	assert.Equal(t, 3, exitCode(tot, ending{trigger: byExit}, clean))
	assert.Equal(t, 124, exitCode(tot, ending{trigger: byTimeout}, clean))
	assert.Equal(t, 130, exitCode(tot, ending{trigger: byCancel}, clean))
	assert.Equal(t, 125, exitCode(tot, ending{trigger: byExit}, dirty), "a straggler is a containment failure")
	assert.Equal(t, 125, exitCode(&protocol.Totals{}, ending{trigger: byExit}, clean), "unknown status")
}

func TestTriggerWords(t *testing.T) {
	assert.Equal(t, "exit", byExit.word())
	assert.Equal(t, "timeout", byTimeout.word())
	assert.Equal(t, "cancel", byCancel.word())
}

// --quiet prints errors only: a summary that says something went wrong is
// one.
func TestAlarmingSummaries(t *testing.T) {
	calm := &protocol.Totals{}
	assert.False(t, alarming(calm, 0, lost{}))
	assert.False(t, alarming(calm, ExitTimedOut, lost{}))
	assert.True(t, alarming(calm, ExitFailed, lost{}), "stragglers: 125")
	assert.True(t, alarming(&protocol.Totals{Cleanup: protocol.Cleanup{Tampered: []string{"pids.max"}}}, 0, lost{}))
	assert.True(t, alarming(&protocol.Totals{Cleanup: protocol.Cleanup{LeafLeft: "/sys/fs/cgroup/x"}}, 0, lost{}))
	assert.True(t, alarming(calm, 0, lost{bytes: 1}))
}
