package supervisor

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper"
)

// statusOf maps bash's wait status to the exitCode and signal keys: the
// exit code, or 128+N and the signal's name if signal N ended bash.
func statusOf(ws unix.WaitStatus) (*int, *string) {
	switch {
	case ws.Exited():
		code := ws.ExitStatus()
		return &code, nil
	case ws.Signaled():
		code := 128 + int(ws.Signal())
		name := signalName(ws.Signal())
		return &code, &name
	}
	return nil, nil
}

// exitCode is shellsup's own exit status: 125 when containment failed
// (something survived, or bash's status was never learned), else 124 for a
// timeout, 128+N for a cancel by signal N (130 for any other cancel), else
// bash's status.
func exitCode(t *protocol.Totals, end ending, rep reaper.Report) int {
	switch {
	case unsound(t, rep.Clean()):
		return ExitFailed
	case end.trigger == byTimeout, end.trigger == byIdle, end.trigger == byNeedsInput:
		return ExitTimedOut
	case end.trigger == byCancel && end.sig != 0:
		return 128 + int(end.sig)
	case end.trigger == byCancel:
		return ExitCancelled
	}
	return *t.ExitCode
}

// summary is human mode's last line on stderr, e.g.
//
//	shellsup: exit 0 in 1.0s; 3 processes cleaned up (1 killed) in 1004ms; captured 96 of 96 bytes
//
// l is what forwarding to shellsup's own stdout and stderr lost.
func summary(t *protocol.Totals, end ending, code int, l lost) string {
	var b strings.Builder
	b.WriteString("shellsup: ")
	switch {
	case t.TimedOut:
		b.WriteString("timed out")
	case t.Idle:
		b.WriteString("idle")
	case t.NeedsInput:
		b.WriteString("needs input")
	case t.Cancelled:
		b.WriteString(end.cancelled())
	case t.Signal != nil:
		fmt.Fprintf(&b, "killed by %s", *t.Signal)
	case t.ExitCode != nil:
		fmt.Fprintf(&b, "exit %d", *t.ExitCode)
	default:
		b.WriteString("status unknown")
	}
	fmt.Fprintf(&b, " in %.1fs; ", float64(t.DurationMs)/1000)
	writeCleanup(&b, t.Cleanup)
	c := t.Cleanup
	fmt.Fprintf(&b, "; captured %d of %d bytes", t.CapturedBytes, t.TotalBytes)
	if t.Truncated {
		b.WriteString(" (truncated)")
	}
	if t.Redactions > 0 {
		fmt.Fprintf(&b, "; %d %s redacted", t.Redactions, plural(t.Redactions, "secret", "secrets"))
	}
	if t.Spill != nil {
		fmt.Fprintf(&b, "; spilled to %s", t.Spill.Dir)
		if t.Spill.Cut {
			b.WriteString(" (cut at the limit)")
		}
	}
	if c.DrainTimedOut {
		b.WriteString("; an output pipe was still held open after the cleanup")
	}
	switch {
	case l.bytes > 0 && l.terminal:
		fmt.Fprintf(&b, "; the terminal stopped taking output: %d bytes not shown", l.bytes)
	case l.bytes > 0:
		fmt.Fprintf(&b, "; the output was not taken: %d bytes not forwarded", l.bytes)
	}
	if code == ExitFailed {
		b.WriteString("; shellsup exits 125")
	}
	return b.String()
}

// cancelled says how a cancel came, in human mode's words: "cancelled by
// SIGINT", "broken pipe (...)", "cancelled (parent-gone)".
func (e ending) cancelled() string {
	switch {
	case e.reason == reasonBrokenPipe:
		return "broken pipe (the reader of shellsup's output is gone)"
	case e.sig != 0:
		return "cancelled by " + signalName(e.sig)
	}
	return fmt.Sprintf("cancelled (%s)", e.reason)
}

// signalName is SIGINT for 2, SIG40 for a signal without a name.
func signalName(sig unix.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return fmt.Sprintf("SIG%d", int(sig))
}

// writeCleanup is the summary's part about the cleanup, e.g. "3 processes
// cleaned up (1 killed) in 1004ms".
func writeCleanup(b *strings.Builder, c protocol.Cleanup) {
	fmt.Fprintf(b, "%d %s cleaned up", c.Reaped, plural(c.Reaped, "process", "processes"))
	if c.Killed > 0 {
		fmt.Fprintf(b, " (%d killed)", c.Killed)
	}
	fmt.Fprintf(b, " in %dms", c.Ms)
	if len(c.Stragglers) > 0 {
		fmt.Fprintf(b, ", %d STRAGGLERS:", len(c.Stragglers)+c.StragglersOmitted)
		for _, s := range c.Stragglers {
			fmt.Fprintf(b, " %d(%s, %s: %s)", s.Pid, s.Comm, s.State, s.Reason)
		}
	}
	if c.PidsLimitHit > 0 {
		fmt.Fprintf(b, "; %d forks refused at --max-procs", c.PidsLimitHit)
	}
	if c.OOMKills > 0 {
		fmt.Fprintf(b, "; %d processes OOM-killed at --max-memory", c.OOMKills)
	}
	if len(c.Tampered) > 0 {
		fmt.Fprintf(b, "; LIMITS TAMPERED WITH by the command: %s", strings.Join(c.Tampered, ", "))
	}
	if c.LeafLeft != "" {
		fmt.Fprintf(b, "; cgroup %s left for the next sweep", c.LeafLeft)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
