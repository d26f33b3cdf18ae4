// Package supervisor runs one shell command, /bin/bash -lc COMMAND, under
// shellsup's containment and reports it to the parent (SPEC sections 2–6).
//
// The guarantee: once Main has written the run's totals (or its one-line
// summary in human mode), nothing the command started is still alive — no
// background job, setsid daemon, double fork, or zombie — or the totals
// name every straggler and Main returns 125. Every ending (bash exited,
// timeout, cancel by frame, signal, parent gone, protocol error, output
// failure) goes through the same cleanup, and before the command exists any
// failure is reported precisely with nothing spawned.
//
// The non-goal: it is not a sandbox. The command runs with shellsup's
// user, environment and filesystem; work handed to daemons outside the
// process tree is out of reach (see package reaper).
package supervisor
