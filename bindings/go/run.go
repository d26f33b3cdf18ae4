package shellsup

import (
	"context"
	"fmt"
	"time"

	"github.com/shellsup/shellsup/request"
)

// The binding's slack: how long Run waits beyond what shellsup promises.
// The Python binding uses the same three numbers; testdata/limits.json
// ("bindingSlack") holds them and a test in each binding compares.

// watchdogSlack, the watchdog margin, is added to what shellsup promises —
// totals within its timeout plus grace plus a few seconds of killing and
// draining, or within grace plus those seconds of a cancel — before Run
// kills it and reports a protocol error. A variable only so that tests can
// shorten it.
var watchdogSlack = 10 * time.Second

const (
	// exitWait bounds the wait for shellsup to exit after its last frame
	// (totals or error): shellsup exits as soon as it has written it.
	exitWait = 5 * time.Second
	// stderrKeep is how much of shellsup's stderr Run keeps for the message
	// of a protocol error: its first 8 KiB. In frames mode shellsup writes
	// nothing there unless something went badly wrong (a Go panic, say).
	stderrKeep = 8 << 10
)

// stderrWait bounds the copying of shellsup's stderr after it exited
// (exec.Cmd.WaitDelay). Not part of the shared slack: the Python binding
// reads stderr itself.
const stderrWait = time.Second

// Run runs req.Command under shellsup and returns the report of the run.
//
// Run first checks every field of req and refuses a bad request with a
// validation *Error before anything is spawned. If ctx is done already, Run
// spawns nothing and returns an error wrapping ctx.Err(). Otherwise it
// starts shellsup with a control channel (a socketpair) on its stdin and reads its frames
// until the totals frame, which becomes the Result.
//
// A non-zero exit status, a timeout and a cancellation are results, not
// errors: Result.ExitCode, Result.TimedOut and Result.Cancelled report them
// and the error is nil. When ctx is cancelled, Run sends shellsup the
// cancel frame and returns once shellsup has cleaned up, with
// Result.Cancelled set (unless the command had finished first) and a nil
// error. When req.Progress fails, see Request.Progress.
//
// If the cleanup left processes running, Run returns the full Result and
// a CategoryCleanupIncomplete *Error. Any other failure is an *Error
// (errors.As) whose Category says what failed; the Result is then the zero
// value. If shellsup does not deliver totals within the run's timeout plus
// its grace plus 10 s — or within the grace plus 10 s of a cancel — Run
// resumes it (SIGCONT) and asks it to cancel (SIGTERM), SIGKILLs it if it
// has not exited within the grace plus 5 s, and returns a CategoryProtocol
// error. A report counts only when shellsup then exits as its totals
// promise (the command's status, 124, 130, 128+N or 125, as the README's
// exit codes say): a shellsup killed by a signal after its totals, or
// exiting otherwise, gives a CategoryProtocol error ("unreported: …") and
// Run kills what is left of the run as for a shellsup that died without
// totals.
//
// Run may be called from several goroutines at once; each call owns its
// shellsup process.
func Run(ctx context.Context, req Request) (Result, error) {
	cfg, err := req.validate()
	if err == nil {
		err = cfg.needSpill()
	}
	cfg.interactive.stopOnWait = true // a PTY run ends when the program waits for input
	if err == nil && cfg.interactive.stdin {
		err = invalid(&request.ValidationError{Msg: "Stdin needs a job: Run cannot write input; use Start, whose Job has Write and SendEOF"})
	}
	if err != nil {
		return Result{}, err
	}
	if err := platformCheck(); err != nil {
		return Result{}, err
	}
	bin, err := resolveBinary(cfg.binary)
	if err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("shellsup: run not started: %w", err)
	}
	p, err := start(bin, cfg)
	if err != nil {
		return Result{}, err
	}
	return p.supervise(ctx, cfg.progress)
}
