// Package pidns is shellsup's PID-namespace tier (--pidns): the command
// runs under a small init that is pid 1 of a new PID namespace, in a
// private mount namespace with its own /proc.
//
// The init is the shellsup binary itself, re-executed through
// /proc/self/exe with a reserved argv[0] and a fixed key as its only
// arguments; MaybeInit, called first thing in main, turns the process into
// the init when (and only when) it finds both and is pid 1. The init
//
//   - sets PR_SET_PDEATHSIG(SIGKILL), then checks that shellsup is still
//     there (its end of the status pipe is open), so when shellsup dies for
//     any reason the kernel kills the init and with it every process of
//     the namespace;
//   - makes every mount private, detaches the host's /proc where it may and
//     mounts a fresh one, so ps inside sees only the command's tree;
//   - starts /bin/bash -lc COMMAND in a new session with the stdio,
//     environment, working directory, empty signal mask and default
//     dispositions shellsup gave the init;
//   - reaps every process of the namespace, passes SIGTERM, SIGINT and
//     SIGHUP on to bash (and drops every other signal), reports bash's wait
//     status on the status pipe as soon as bash is reaped, and exits once it
//     has no child left.
//
// Run as root, the namespaces are created directly (CLONE_NEWPID,
// CLONE_NEWNS); run as another user, inside a new user namespace that maps
// only the caller's own uid and gid, so files the command creates keep
// their owner. The init is handed CAP_SYS_ADMIN of that user namespace as
// an ambient capability to mount /proc and drops it before bash starts.
//
// The parent side, Start, returns an *Init that is a reaper.Tier: its Kill
// sends SIGKILL to the init through a pidfd, which is the kernel's own
// teardown of the whole namespace.
package pidns
