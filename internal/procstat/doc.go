// Package procstat parses /proc/PID/stat: the one parser of that file in
// the module, for the cleanup (package reaper), the tiers (cgroup, pidns),
// the Go binding, the soak and bench tools and the tests
// (oneparser_test.go fails on a hand parser elsewhere).
//
// The guarantee: a command name holding spaces, parentheses or a newline
// is read whole (fields are counted from the last ')'), and a line that is
// short or malformed is an error naming the pid and the field, never a
// panic or a zero value taken for a real one.
//
// The non-goal: only the fields shellsup uses are read (state, ppid,
// session, utime, stime, starttime); prometheus/procfs is the general parser, against which the
// tests compare this one. It is hand-written because a cleanup scans every
// process on the machine several times and fmt.Fscan over 40 fields costs
// tens of microseconds each.
package procstat
