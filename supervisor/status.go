package supervisor

import "github.com/shellsup/shellsup/protocol"

// unsound says whether shellsup cannot stand behind the run's report and
// exits 125: something survived the cleanup, or bash's status was never
// learned.
func unsound(t *protocol.Totals, clean bool) bool { return !clean || t.ExitCode == nil }

// statusWord is totals.status: how the run ended, the first that applies
// of failed, idle, needs_input, timeout, cancelled, oom, signaled and
// exited (protocol status.go). oom needs a process of the tree killed at the memory limit
// and a bash that did not exit 0: a command that survives the loss of one
// of its processes, and says so by its status, succeeded.
func statusWord(t *protocol.Totals, clean bool) string {
	switch {
	case unsound(t, clean):
		return protocol.StatusFailed
	case t.Idle:
		return protocol.StatusIdle
	case t.NeedsInput:
		return protocol.StatusNeedsInput
	case t.TimedOut:
		return protocol.StatusTimeout
	case t.Cancelled:
		return protocol.StatusCancelled
	case t.Cleanup.OOMKills > 0 && *t.ExitCode != 0:
		return protocol.StatusOOM
	case t.Signal != nil:
		return protocol.StatusSignaled
	}
	return protocol.StatusExited
}
