// Package ports finds the TCP and UDP ports that a set of processes is
// listening on.
//
// The guarantee: a port is reported only if a socket bound to it is open in
// one of the given processes (its inode is behind one of their fds), so a
// stranger already listening on the same port is never mistaken for the
// job. Only sockets in shellsup's own network namespace are reported (its
// /proc/self/net tables are the only ones read): a listener the job made
// in a namespace of its own (unshare -n) is not reachable at the port, so
// it is not the job's port, even when a stranger holds that port here.
// Each proto/addr/port is listed once. TCP sockets count when in LISTEN
// state, UDP sockets when bound.
//
// The non-goal: sockets held only by processes outside the set (a server
// started through a daemon, say) are not found; and the set of processes is
// the caller's to give.
package ports
