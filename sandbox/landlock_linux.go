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

// fileRights are the rights a rule on a file (not a directory) may carry.
const fileRights = ll.AccessFSWriteFile | ll.AccessFSTruncate

// tcpRights: with no rule granting them, no TCP bind or connect at all.
const tcpRights = ll.AccessNetBindTCP | ll.AccessNetConnectTCP

// Restrict sets no_new_privs and enforces p's Landlock rules on the
// calling thread only (never on shellsup's other threads); every process
// the thread forks inherits them, and nothing can lift them. The caller
// keeps the thread locked and lets the Go runtime retire it. With the TCP
// rules it adds the seccomp filter of seccomp_linux.go. Without
// filesystem or TCP rules it does nothing.
func Restrict(p *Policy) error {
	if !p.FS() && !p.LandlockTCP {
		return nil
	}
	attr := ll.RulesetAttr{}
	if p.FS() {
		attr.HandledAccessFS = writeRights
	}
	if p.LandlockTCP {
		attr.HandledAccessNet = tcpRights
	}
	if p.Scoped {
		attr.Scoped = ll.ScopeSignal | ll.ScopeAbstractUnixSocket
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
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(PR_SET_NO_NEW_PRIVS)", err)
	}
	if err := ll.LandlockRestrictSelf(fd, 0); err != nil {
		return os.NewSyscallError("landlock_restrict_self", err)
	}
	if p.LandlockTCP {
		return denyTCPBypasses() // what the TCP rules do not see (seccomp_linux.go)
	}
	return nil
}

// addRules grants the writable places: the workspace (less what --protect
// keeps), the private TMPDIR and the devices.
func addRules(fd int, p *Policy) error {
	var dirs []string
	if p.Mode == ModeWorkspaceWrite {
		grants, err := Grants(p.Workspace, p.Protect)
		if err != nil {
			return err
		}
		dirs = append(dirs, grants...)
	}
	if p.TmpDir != "" {
		dirs = append(dirs, p.TmpDir)
	}
	for _, d := range dirs {
		if err := allow(fd, d, true); err != nil {
			return err
		}
	}
	for _, d := range Devices {
		if err := allow(fd, d, false); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// allow adds a rule granting the write rights beneath path (a directory)
// or on path (a file), never following a final symbolic link.
func allow(fd int, path string, required bool) error {
	pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		if !required && err == unix.ENOENT {
			return os.ErrNotExist
		}
		return fmt.Errorf("opening %q for a Landlock rule: %w", path, err)
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return fmt.Errorf("stat %q for a Landlock rule: %w", path, err)
	}
	rights := uint64(fileRights)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		rights = writeRights
	case unix.S_IFLNK:
		return nil // a link grants nothing: only what it names could be written, and that is outside
	}
	if err := ll.LandlockAddPathBeneathRule(fd, &ll.PathBeneathAttr{AllowedAccess: rights, ParentFd: pfd}, 0); err != nil {
		return fmt.Errorf("adding a Landlock rule for %q: %w", path, os.NewSyscallError("landlock_add_rule", err))
	}
	return nil
}
