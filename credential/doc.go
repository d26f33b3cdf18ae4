// Package credential is shellsup's privilege separation (--user
// USER[:GROUP]): it resolves the user and group in shellsup's own
// /etc/passwd and /etc/group, checks that shellsup may take that identity,
// and prepares the thread that forks bash so that bash runs as that user
// with no capability and no way to gain one.
//
// The guarantee: a bash forked on a thread that Drop has prepared, with
// the Credential of its User, runs with the user's uid and gid (real,
// effective and saved), the user's groups as initgroups(3) would set them
// (or none but the group, when a group was given), empty capability sets
// (effective, permitted, inheritable, ambient; and the bounding set where
// shellsup holds CAP_SETPCAP, always for uid 0) and no_new_privs, so that
// no setuid program or file capability gives any back.
//
// The non-goal: it does not choose what the user may read or write; files,
// the working directory and sockets keep their own permissions. Names are
// looked up in the files only (CGO is off: no NSS, no LDAP).
package credential
