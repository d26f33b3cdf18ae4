// Package affinity holds every thread of the process on one CPU for a
// stretch of start-up.
//
// Why: the Go runtime's start-up hand-offs between threads (os/signal's
// mask thread takes two per signal registered; each thread the reaper's
// reserve starts takes a few) are cross-CPU wake-ups when the threads sit
// on different CPUs, and on a virtual machine waking an idle CPU costs tens
// of microseconds. On one CPU they are plain context switches: shellsup
// registers its 51 signals in about 0.21 ms instead of 0.85 ms
// (docs/startup.md).
//
// The guarantee: once the release function that [Hold] returns has
// returned, every thread of the process, those started while it was held
// included, has the CPU set the caller had when Hold was called, checked
// by a pass over /proc/self/task that found nothing left to restore (at
// most eight passes). A process forked afterwards (bash) thus inherits that
// set, not the one CPU. The non-goal: it is only a speed-up. Where the CPU
// set cannot be read, or holds one CPU, nothing is held.
package affinity
