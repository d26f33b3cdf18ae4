package sandbox

import (
	"fmt"
	"os"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// writeRights are every filesystem right that changes something: the
// rights the rulesets handle, so each is denied wherever no rule grants it.
// Reading, listing and executing are not handled: they stay as the user's
// permissions allow.
const writeRights = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
	ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock |
	ll.AccessFSMakeFifo | ll.AccessFSMakeBlock | ll.AccessFSMakeSym | ll.AccessFSRefer |
	ll.AccessFSTruncate

// dirRights are what a rule on a directory grants beneath it: every write
// right but making a device node. A node made beneath a writable place
// reaches whatever device its numbers name (a disk, another terminal), so
// MakeChar and MakeBlock stay handled and are granted nowhere.
const dirRights = writeRights &^ (ll.AccessFSMakeChar | ll.AccessFSMakeBlock)

// fileRights are the rights a rule on a file (not a directory) may carry.
const fileRights = ll.AccessFSWriteFile | ll.AccessFSTruncate

// handledFS are the filesystem rights the rulesets handle: the write
// rights, and ioctl(2) on a device (ABI 5) opened under the rules, granted
// only on Devices: a command cannot open another terminal (read-only:
// reading is not handled) and type into it with TIOCSTI. A file opened
// before the rules (bash's terminal, its pipes) keeps every ioctl.
const handledFS = writeRights | ll.AccessFSIoctlDev

// tcpRights: with no rule granting them, no TCP bind or connect at all.
const tcpRights = ll.AccessNetBindTCP | ll.AccessNetConnectTCP

// Restrict enforces p's Landlock rules on the calling thread only (never
// on shellsup's other threads); every process the thread forks inherits
// them, and nothing can lift them. The caller keeps the thread locked and
// lets the Go runtime retire it. With the TCP rules it adds the seccomp
// filter of seccomp_linux.go, with p.NoHandles the one that refuses nsfs
// file handles. Without any of them it does nothing.
func Restrict(p *Policy) error {
	if p.FS() || p.LandlockTCP || p.Domain {
		if err := restrictLandlock(p); err != nil {
			return err
		}
	}
	if p.LandlockTCP {
		if err := denyTCPBypasses(); err != nil { // what the TCP rules do not see (seccomp_linux.go)
			return err
		}
	}
	if p.NoNetAdmin { // planHold
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, unix.CAP_NET_ADMIN, 0, 0, 0); err != nil {
			return fmt.Errorf("dropping CAP_NET_ADMIN from the bounding set: %w", err)
		}
	}
	if p.NoHandles {
		return denyNamespaceHandles() // planHold
	}
	return nil
}

// restrictLandlock makes the ruleset and enforces it. With rules
// (filesystem or TCP) it sets no_new_privs first. A bare p.Domain (a root
// command, which has CAP_SYS_ADMIN, all landlock_restrict_self needs
// instead) leaves no_new_privs unset: setuid programs and file
// capabilities work as without --no-network.
func restrictLandlock(p *Policy) error {
	attr := ll.RulesetAttr{}
	if p.FS() {
		attr.HandledAccessFS = handledFS
	}
	if p.LandlockTCP {
		attr.HandledAccessNet = tcpRights
	}
	switch {
	case p.Scoped:
		attr.Scoped = ll.ScopeSignal | ll.ScopeAbstractUnixSocket
	case p.Domain:
		attr.Scoped = ll.ScopeAbstractUnixSocket // per network namespace anyway: nothing taken in a new one
	}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return os.NewSyscallError("landlock_create_ruleset", err)
	}
	defer unix.Close(fd) // the domain keeps what it needs
	if p.FS() {
		if err := addRules(fd, p); err != nil {
			return err
		}
	}
	if p.FS() || p.LandlockTCP {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return os.NewSyscallError("prctl(PR_SET_NO_NEW_PRIVS)", err)
		}
	}
	if err := ll.LandlockRestrictSelf(fd, 0); err != nil {
		return os.NewSyscallError("landlock_restrict_self", err)
	}
	return nil
}

// addRules grants the writable places: the workspace (less what --protect
// keeps, found by descriptors: Grants), the private TMPDIR and the devices.
func addRules(fd int, p *Policy) error {
	if p.Mode == ModeWorkspaceWrite {
		grants, err := p.Grants()
		if err != nil {
			return err
		}
		defer CloseGrants(grants)
		for _, g := range grants {
			if err := allowFD(fd, g.FD, g.Path, false); err != nil {
				return err
			}
		}
		p.granted = grantPaths(grants)
	}
	if p.TmpDir != "" {
		if err := allow(fd, p.TmpDir, false, true); err != nil {
			return err
		}
	}
	for _, d := range Devices {
		if err := allow(fd, d, true, false); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// allow adds allowFD's rule for path, opened never following a final
// symbolic link.
func allow(fd int, path string, device, required bool) error {
	pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		if !required && err == unix.ENOENT {
			return os.ErrNotExist
		}
		return fmt.Errorf("opening %q for a Landlock rule: %w", path, err)
	}
	defer unix.Close(pfd)
	return allowFD(fd, pfd, path, device)
}

// allowFD adds a rule for the file the O_PATH descriptor pfd names (path
// only says which, in errors): the write rights beneath a directory, or
// writing and truncating a file (a device of Devices, when device is set,
// also its ioctls); nothing for a link.
func allowFD(fd, pfd int, path string, device bool) error {
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return fmt.Errorf("stat %q for a Landlock rule: %w", path, err)
	}
	rights := uint64(fileRights)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		rights = dirRights
	case unix.S_IFLNK:
		return nil // a link grants nothing: only what it names could be written, and that is outside
	case unix.S_IFCHR, unix.S_IFBLK:
		if device {
			rights |= ll.AccessFSIoctlDev
		}
	}
	if err := ll.LandlockAddPathBeneathRule(fd, &ll.PathBeneathAttr{AllowedAccess: rights, ParentFd: pfd}, 0); err != nil {
		return fmt.Errorf("adding a Landlock rule for %q: %w", path, os.NewSyscallError("landlock_add_rule", err))
	}
	return nil
}
