package shellsup

import (
	"time"

	"github.com/shellsup/shellsup/protocol"
)

// Result is the report of a run that happened: the result keys (README,
// "Frames mode") as Go fields, plus how it was cancelled and what the cleanup
// did. When Run returns a Result, shellsup has killed and reaped every
// process the command started, or listed it in Cleanup.Stragglers.
type Result struct {
	Command string // the command as given
	Cwd     string // the working directory, resolved and absolute
	Stdout  string // captured stdout text (README, "Output capture"), marker included
	Stderr  string // captured stderr text

	// ExitCode is bash's exit status, or 128+N if signal N ended bash. It is
	// -1 only if shellsup never learned bash's status: bash itself could not
	// be killed and is listed in Cleanup.Stragglers (exitCode null in the totals frame).
	ExitCode int
	// Signal is the name of the signal that ended bash ("SIGTERM" when the
	// cleanup's SIGTERM ended it, as after a timeout; "SIGKILL"), or ""
	// if bash exited by itself (signal null in the totals frame).
	Signal string

	// Cancelled and TimedOut say how the run was stopped; at most one is
	// set, the first cause wins. Neither is set if bash had already exited.
	Cancelled bool
	TimedOut  bool
	// CancelReason says why a cancelled run was cancelled: "request" (ctx
	// was cancelled, or the Progress callback failed), "signal" (shellsup
	// received SIGTERM, SIGINT or SIGHUP), "parent-gone" or "protocol". It
	// is "" when Cancelled is false.
	CancelReason string
	// Truncated is set when the capture budget ran out and the truncation
	// marker was emitted.
	Truncated bool

	TotalBytes    int64 // raw bytes read from both pipes
	CapturedBytes int64 // UTF-8 bytes of Stdout plus Stderr, at most the budget
	ProgressBytes int64 // bytes sent as progress; equals CapturedBytes unless delivery failed

	// Duration is the wall time from spawning bash to the end of the
	// cleanup, in whole milliseconds.
	Duration time.Duration

	// Status is how the run ended, in one word: StatusExited, StatusSignaled,
	// StatusTimeout, StatusCancelled, StatusOOM or StatusFailed (README,
	// "How a run ended"; the first that applies). It is StatusFailed only
	// with the CategoryCleanupIncomplete error, or when bash's status was
	// never learned. Expect words this version does not list
	// (StatusIdle, StatusNeedsInput come with interactive runs).
	Status string

	// Cleanup reports what shellsup did to remove the command's processes.
	Cleanup Cleanup

	// StdoutBytes and StderrBytes are the raw bytes read from each pipe
	// (together TotalBytes).
	StdoutBytes, StderrBytes int64
	// StdoutText and StderrText say what became of each stream's bytes on
	// their way to text: lost to U+FFFD, binary, tidied (docs/tidy.md).
	StdoutText, StderrText StreamText

	// InteractiveResult: Idle, NeedsInput, Prompt (docs/interactive.md).
	InteractiveResult
	// Spill names the spill files and what they hold, when the run had a
	// spill directory (Request.Spill, or always for a job); nil otherwise.
	Spill *Spill
	// Sandbox is what the sandbox enforced (Request.Sandbox,
	// Request.Network); nil without one.
	Sandbox *SandboxReport
}

// Status words of Result.Status (the totals frame's status).
const (
	StatusExited     = protocol.StatusExited     // bash exited by itself, with any code
	StatusSignaled   = protocol.StatusSignaled   // a signal ended bash (Result.Signal)
	StatusTimeout    = protocol.StatusTimeout    // the timeout (or a job's lifetime) fired first
	StatusCancelled  = protocol.StatusCancelled  // a cancel came first (Result.CancelReason)
	StatusOOM        = protocol.StatusOOM        // a process was killed at MaxMemory and bash did not exit 0
	StatusFailed     = protocol.StatusFailed     // shellsup cannot stand behind the run (it exits 125)
	StatusIdle       = protocol.StatusIdle       // nothing printed for IdleTimeout (Result.Idle)
	StatusNeedsInput = protocol.StatusNeedsInput // a PTY run waited for input (Result.Prompt)
)

// StreamText is what became of one stream's raw bytes on their way to
// text. LossyBytes and Binary describe the bytes shellsup decoded: all of
// the stream, except what a head capture drains past its budget without
// decoding, and what follows the binary verdict under Request.Tidy.
type StreamText struct {
	LossyBytes int64 // raw bytes that became U+FFFD
	// Binary is set for a stream with a NUL byte, or with more than 10% of
	// 8 KiB (819 bytes) of its first 8 KiB lost to U+FFFD. Under Request.Tidy its captured text
	// is one line, "[binary output: N bytes; starts 7f 45 4c 46 …]".
	Binary bool
	// TidiedBytes is, under Request.Tidy, the UTF-8 bytes of decoded text
	// the tidier took out less those it put in (fold and binary lines): for
	// a valid UTF-8 stream read whole, not truncated and not redacted, the
	// stream's raw bytes minus TidiedBytes is the length of its captured
	// text. 0 without Tidy.
	TidiedBytes int64
}

// Spill describes a run's spill files: every raw byte of each stream, up
// to the limit (Request.SpillMax).
type Spill struct {
	Dir            string // the run's own directory, made by shellsup
	Stdout, Stderr string // the files' paths
	// StdoutWritten and StderrWritten are the bytes in each file.
	StdoutWritten, StderrWritten int64
	// StdoutDropped and StderrDropped are the bytes past the limit,
	// counted and not written.
	StdoutDropped, StderrDropped int64
	// Cut is set when any byte was dropped.
	Cut bool
}

// Cleanup reports shellsup's cleanup of one run.
type Cleanup struct {
	Tier       string      // the containment that guarded the run, e.g. "subreaper"
	Trigger    string      // what ended the run: "exit", "timeout" or "cancel"
	Signalled  int         // distinct processes sent SIGTERM or SIGKILL
	Killed     int         // distinct processes sent SIGKILL
	Reaped     int         // children reaped by shellsup, bash included
	Rounds     int         // enumeration passes over /proc
	Stragglers []Straggler // processes that could not be removed; empty on a clean run; at most 100
	// StragglersOmitted counts stragglers beyond the 100 listed.
	StragglersOmitted int
	Duration          time.Duration // time spent in cleanup, in whole milliseconds
	DrainTimedOut     bool          // a pipe stayed open after the tree was gone (held from outside it)
	PidsLimitHit      int64         // forks refused at Request.MaxProcs
	OOMKills          int64         // processes the kernel killed at Request.MaxMemory
	// Tampered names the limit files ("pids.max", "memory.max", …) the
	// command wrote or changed after shellsup set them: a command of
	// shellsup's own uid can; Request.User makes the limits binding.
	Tampered []string
	LeafLeft string // a cgroup leaf left for the next sweep, "" when none was
	// TmpRemoved counts the entries of the sandbox's private TMPDIR the
	// cleanup removed (the directory included); TmpLeft names it if it
	// could not be removed.
	TmpRemoved int
	TmpLeft    string
}

// Straggler is a process shellsup could not remove before its deadline,
// for example one in uninterruptible sleep (state "D").
type Straggler struct {
	Pid    int
	Comm   string
	State  string // the /proc state letter
	Reason string // why it survived
}

// Clean reports whether cleanup left nothing behind.
func (c Cleanup) Clean() bool { return len(c.Stragglers) == 0 && c.StragglersOmitted == 0 }

// resultOf converts the totals frame.
func resultOf(t *protocol.Totals) Result {
	r := Result{
		Command: t.Command, Cwd: t.Cwd, Stdout: t.Stdout, Stderr: t.Stderr,
		ExitCode: -1, Cancelled: t.Cancelled, TimedOut: t.TimedOut, CancelReason: t.CancelReason,
		Truncated: t.Truncated, TotalBytes: t.TotalBytes, CapturedBytes: t.CapturedBytes,
		ProgressBytes: t.ProgressBytes, Duration: time.Duration(t.DurationMs) * time.Millisecond,
		Cleanup: cleanupOf(t.Cleanup), StdoutBytes: t.StdoutBytes, StderrBytes: t.StderrBytes,
		Status:     t.Status,
		StdoutText: StreamText{LossyBytes: t.StdoutLossyBytes, Binary: t.StdoutBinary, TidiedBytes: t.StdoutTidiedBytes},
		StderrText: StreamText{LossyBytes: t.StderrLossyBytes, Binary: t.StderrBinary, TidiedBytes: t.StderrTidiedBytes},
	}
	if sp := t.Spill; sp != nil {
		r.Spill = &Spill{Dir: sp.Dir, Stdout: sp.Stdout, Stderr: sp.Stderr, StdoutWritten: sp.StdoutWritten,
			StderrWritten: sp.StderrWritten, StdoutDropped: sp.StdoutDropped, StderrDropped: sp.StderrDropped, Cut: sp.Cut}
	}
	r.Sandbox = sandboxOf(t.Sandbox)
	r.InteractiveResult = interactiveOf(t)
	if t.ExitCode != nil {
		r.ExitCode = *t.ExitCode
	}
	if t.Signal != nil {
		r.Signal = *t.Signal
	}
	return r
}

func cleanupOf(c protocol.Cleanup) Cleanup {
	out := Cleanup{
		Tier: c.Tier, Trigger: c.Trigger, Signalled: c.Signalled, Killed: c.Killed, Reaped: c.Reaped,
		Rounds: c.Rounds, Duration: time.Duration(c.Ms) * time.Millisecond, DrainTimedOut: c.DrainTimedOut,
		StragglersOmitted: c.StragglersOmitted, PidsLimitHit: c.PidsLimitHit, OOMKills: c.OOMKills,
		Tampered: c.Tampered, LeafLeft: c.LeafLeft, TmpRemoved: c.TmpRemoved, TmpLeft: c.TmpLeft,
		Stragglers: make([]Straggler, 0, len(c.Stragglers)),
	}
	for _, s := range c.Stragglers {
		out.Stragglers = append(out.Stragglers, Straggler{Pid: s.Pid, Comm: s.Comm, State: s.State, Reason: s.Reason})
	}
	return out
}
