// Package sandbox is shellsup's opt-in sandbox (--sandbox, --no-network):
// what the command may write and which network it sees, enforced by the
// kernel on bash and every process it starts, and never lifted.
//
// The filesystem modes are Landlock rulesets that handle every write right
// (write, truncate, make, remove, rename and link across directories) and
// ioctl on devices, never granting device nodes to be made, nor ioctl but
// on the devices below; the workspace's rules are made by descriptors on
// the directories configuration pinned (Pin, Grants):
// read-only allows writes only to a private, per-run TMPDIR and a few
// harmless devices (/dev/null, /dev/zero, /dev/full; not /dev/tty, which names
// whatever terminal the caller's session has);
// workspace-write adds the workspace, less the directories --protect names.
// Reading stays as the user's permissions allow. --no-network gives the
// command a new network namespace with only loopback up; where shellsup
// can make none, Landlock denies every TCP connect and bind instead. A
// root command is kept in its namespace by a bare Landlock domain (no
// ptrace access, so no /proc/PID/ns, outside it) and a seccomp filter
// against nsfs file handles (planHold).
//
// Plan decides, from what the kernel offers (Kernel, probed once), how a
// policy is enforced, and refuses a policy it cannot enforce in full: no
// mode ever runs with less than it promises. Restrict and EnterNetwork
// change only the calling thread, which OnThread keeps locked (never the
// main thread) and retires after bash was forked from it: shellsup itself
// stays unrestricted, so it can still write cgroup and spill files. Where
// Landlock has scopes (ABI 6) the command also cannot signal, or reach an
// abstract Unix socket of, a process outside the run.
//
// Non-goals: it does not hide what the user may read (secrets in readable
// files), does not filter UDP or Unix sockets under the Landlock network
// fallback, and does not hide other processes in /proc (--pidns does).
package sandbox
