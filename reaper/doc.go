// Package reaper finds, kills and reaps every process descended from
// shellsup.
//
// The guarantee: when Cleanup returns a Report with no stragglers, no
// process descended from shellsup remains, running or zombie. Cleanup sends
// SIGTERM and SIGCONT to every descendant, waits up to a grace period for
// the tree to empty, then stops the tree (SIGSTOP, walked to a fixpoint so a
// forking tree cannot outrun it) and kills it (SIGKILL), repeating until
// wait reports ECHILD or a hard deadline passes. A reused PID is never
// signalled: shellsup's own children are signalled by pid only while the
// Waiter is pinned (an unreaped child's pid cannot be reused), every other
// descendant through a pidfd verified against the start time seen in /proc.
// Exactly one goroutine, the Waiter's, reaps children. docs/cleanup.md
// gives the algorithm and the argument.
//
// The non-goal: work handed to a process outside the tree (systemd-run, an
// existing tmux server, at, docker) is not a descendant and is not found;
// and if shellsup itself is SIGKILLed the subreaper boundary ends with it.
//
// Containment comes in tiers behind one cleanup path (see Tier). The floor
// is the "subreaper" tier: PR_SET_CHILD_SUBREAPER plus a /proc scan. The
// cgroup v2 tier (package cgroup: cgroup.freeze, cgroup.kill, pids.max) is
// added with AddTier; a PID namespace tier slots in the same way. The package is Linux-only; on other systems
// every entry point returns ErrUnsupported.
package reaper
