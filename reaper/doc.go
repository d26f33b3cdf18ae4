// Package reaper finds, kills and reaps every process descended from
// shellsup.
//
// The guarantee: when Cleanup returns a Report with no stragglers, no
// process descended from shellsup remains, running or zombie. Cleanup sends
// SIGTERM and SIGCONT to every descendant (bounded by the grace), waits up
// to the grace for the tree to empty, then stops the tree (SIGSTOP, walked
// to a fixpoint so a forking tree cannot outrun it; a process found running
// again is killed at once) and kills it (SIGKILL, each pass run to its end),
// repeating until wait reports ECHILD or the hard deadline passes.
//
// Identity all the way: a process is a descendant only if its parent is a
// verified member of the tree, checked link by link from shellsup down; a
// stranger that took a dead member's pid, and its children, never are.
// shellsup's own children are signalled by pid only while the Waiter is
// pinned and only if not reaped since they were verified (the Waiter's reap
// count); every other descendant is held as a firm identity (pid and a
// start time it was seen alive after) and signalled through a pidfd opened
// and checked against it just before the signal. The cleanup holds at most
// two fds at a time, and falls back on low-numbered fds reserved at process
// start when the command has lowered shellsup's RLIMIT_NOFILE; when not even
// those can be had (a limit of 3 or less), it kills shellsup's children by
// pid, found through a children file held open since Setup, until none is
// left (see held_linux.go). Exactly one
// goroutine, the Waiter's, reaps children. docs/cleanup.md gives the
// algorithm and the argument.
//
// The non-goal: work handed to a process outside the tree (systemd-run, an
// existing tmux server, at, docker) is not a descendant and is not found;
// and if shellsup itself is SIGKILLed the subreaper boundary ends with it.
//
// Containment comes in tiers behind one cleanup path (see Tier). The floor
// is the "subreaper" tier: PR_SET_CHILD_SUBREAPER plus a /proc scan. The
// cgroup v2 tier (package cgroup: cgroup.freeze, cgroup.kill, pids.max) is
// added with AddTier, and so is the PID-namespace tier (package pidns,
// shellsup --pidns). The package is Linux-only; on other systems
// every entry point returns ErrUnsupported.
package reaper
