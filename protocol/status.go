package protocol

// Status words carried by totals.status (and, for a run that could not
// happen, error.status): how the run ended, one word a caller can switch
// on. The first that applies, in this order:
//
//   - StatusFailed: shellsup itself failed, so it exits 125: the run could
//     not happen (the error frame), or the cleanup left a process behind,
//     or bash's status was never learned.
//   - StatusIdle, StatusNeedsInput (interactive runs, docs/interactive.md):
//     the idle timeout fired first, or a --stop-on-input run's program
//     waited for input.
//   - StatusTimeout: the timeout (or a job's lifetime) fired first.
//   - StatusCancelled: a cancel came first (any reason).
//   - StatusOOM: the kernel killed a process of the tree at the memory limit
//     (cleanup.oomKills > 0) and bash did not exit 0.
//   - StatusSignaled: a signal ended bash (signal is set).
//   - StatusExited: bash exited by itself, with any code.
//
// Readers must accept words they do not know.
const (
	StatusExited     = "exited"
	StatusSignaled   = "signaled"
	StatusTimeout    = "timeout"
	StatusCancelled  = "cancelled"
	StatusOOM        = "oom"
	StatusFailed     = "failed"
	StatusIdle       = "idle"
	StatusNeedsInput = "needs_input"
)
