// Package proctest is the test support shared by the suites that run real
// processes (cmd/shellsup, bindings/go): the TestMain that builds the
// binaries under test once, a registry of helper programs played by the
// test binary itself (os/exec's pattern), polling with a deadline, and
// reading /proc/PID/stat.
//
// The guarantee: a full run of a suite (no -run, -skip or -list) fails if
// a registered helper was never started, so a helper cannot outlive the
// test that needed it unnoticed; every helper exits by itself after its
// lifetime, so a failing test cannot leak it for long; and the suite runs
// as a child subreaper, so orphans land on the test binary where
// reaper/reapertest sees them.
//
// The non-goal: it checks no leaks itself (reaper/reapertest does) and
// asserts nothing about what the processes do.
package proctest
