// The Go runtime's cgroup-aware GOMAXPROCS keeps two cgroup files open for
// the life of the process, at the lowest free fd numbers (3 and 4). Those
// numbers belong to the reaper's fd reserve: after a command lowers
// shellsup's RLIMIT_NOFILE (prlimit --pid $PPID --nofile=5:5), only fds
// below the limit can be allocated, and the cleanup must still open a pidfd
// and a /proc file. A supervisor that mostly waits has no use for a
// GOMAXPROCS fitted to a CPU quota. Embedded mode passes the same settings
// to the re-executed supervisor through GODEBUG (internal/embedmode.Godebug,
// kept equal to the directives here by a test).

//go:debug containermaxprocs=0

package main
