// Package ports finds the TCP and UDP ports that a set of processes is
// listening on.
//
// The guarantee: a port is reported only if a socket bound to it is open in
// one of the given processes (its inode is behind one of their fds), so a
// stranger already listening on the same port is never mistaken for the
// job. TCP sockets count when in LISTEN state, UDP sockets when bound.
//
// The non-goal: sockets held only by processes outside the set (a server
// started through a daemon, say) are not found; and the set of processes is
// the caller's to give.
package ports
