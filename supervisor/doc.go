// Package supervisor runs one shell command, /bin/bash -lc COMMAND, under
// shellsup's containment and reports it to the parent (README, "Command
// line" and "Frames mode").
//
// The guarantee: once Main has written the run's totals (or its one-line
// summary in human mode), nothing the command started is still alive — no
// background job, setsid daemon, double fork, or zombie — or the totals
// name every straggler and Main returns 125. Every ending (bash exited,
// timeout, cancel by frame, signal, parent gone, protocol error, output
// failure) goes through the same cleanup, and before the command exists any
// failure is reported precisely with nothing spawned.
//
// How a run ends: the first cause wins. The causes are bash's exit, the
// timeout, and a cancel (a cancel frame, SIGTERM/SIGINT/SIGHUP, the parent
// gone, a malformed control frame, an output failure). Later causes are
// ignored: a cancel after the timeout fired changes nothing, and only the
// first cancel reason is reported. Exit wins a tie: if the timeout fires or
// a cancel arrives when bash has already exited, the run ended by exit
// (trigger "exit", bash's status, neither timedOut nor cancelled); the
// README ("Frames mode") states the same rule for users.
//
// Output: each pipe has a pump (drain_linux.go) that gives the raw bytes to
// the run's spill file (--spill) and, in human mode, to shellsup's own
// stdout or stderr, unbounded; and the text, decoded, perhaps tidied
// (--tidy, tidy_linux.go: a held partial line is released by a timer) and
// perhaps redacted, to the one budget both streams share and to a tail
// window (--capture).
// Once nothing needs the bytes in user space, the pump splices the pipe
// into its destination. The README ("Full output") states the rules. In
// human mode the pump hands the bytes for the terminal to a forwarder
// (forward_linux.go), which writes them from a goroutine of its own: the
// pump never waits on a write(2), so a terminal that stops taking output
// holds neither the capture nor, past its bound, the run (README, "Command
// line").
//
// The non-goal: without --sandbox or --no-network it is not a sandbox
// (package sandbox is the opt-in one). The command runs with shellsup's
// user, environment (changed only as package environ documents) and
// filesystem; --workspace checks where the command starts, not where it
// goes; work handed to daemons outside the
// process tree is out of reach (see package reaper).
package supervisor
