// Package affinity runs a stretch of start-up with every thread of the
// process on one CPU.
//
// Why: the Go runtime's start-up hand-offs between threads (os/signal's
// mask thread takes two hand-offs per signal registered; each thread the
// reaper's reserve starts takes more) each cost a cross-CPU wake-up when
// the threads sit on different CPUs, and on a virtual machine a wake-up of
// an idle CPU costs tens of microseconds. On one CPU the same hand-offs are
// plain context switches: registering shellsup's 51 signals takes about
// 0.3 ms there instead of 1.3 ms.
//
// The guarantee: once the release function [Hold] returns has returned, every thread of the process
// (those started while held included) has the CPU set the process had when
// Hold was called, checked by a pass that found nothing to restore; so a
// process forked afterwards (bash) inherits the caller's CPU set, not the
// one CPU. The non-goal: it is only a speed-up. Where the CPU set cannot
// be read or narrowed, nothing is held.
package affinity
