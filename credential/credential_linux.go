package credential

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Credential is what the fork sets in the child, before chdir and exec:
// setgroups, then setgid, then setuid.
func (u *User) Credential() *syscall.Credential {
	return &syscall.Credential{Uid: u.Uid, Gid: u.Gid, Groups: append([]uint32{}, u.Groups...)}
}

// Permitted says whether shellsup may run bash as u: it needs CAP_SETUID
// and CAP_SETGID (root has them) to take the identity, CAP_KILL to signal
// the command's processes at cleanup unless u has shellsup's own uid,
// CAP_SETPCAP too for uid 0 (without an empty bounding set, an exec as uid
// 0 would give every capability back), and u's ids must exist in
// shellsup's user namespace.
func (u *User) Permitted() error {
	eff, err := effectiveCaps()
	if err != nil {
		return fmt.Errorf("--user %s: reading shellsup's capabilities: %w", u.Spec, err)
	}
	sameUID := int(u.Uid) == os.Geteuid() && int(u.Uid) == os.Getuid()
	for _, c := range []struct {
		bit    int
		name   string
		needed bool
	}{
		{unix.CAP_SETUID, "CAP_SETUID", true},
		{unix.CAP_SETGID, "CAP_SETGID", true},
		{unix.CAP_KILL, "CAP_KILL (to signal the command's processes at cleanup)", !sameUID},
	} {
		if c.needed && eff&(1<<c.bit) == 0 {
			return fmt.Errorf("--user %s: shellsup must run as root or with CAP_SETUID, CAP_SETGID and CAP_KILL to run the command as another user; it runs as uid %d without %s",
				u.Spec, os.Geteuid(), c.name)
		}
	}
	if u.Uid == 0 && eff&(1<<unix.CAP_SETPCAP) == 0 {
		return fmt.Errorf("--user %s: running the command as uid 0 without capabilities needs CAP_SETPCAP (to empty the bounding set), which shellsup lacks", u.Spec)
	}
	if err := mapped("/proc/self/uid_map", u.Uid); err != nil {
		return fmt.Errorf("--user %s: uid %d: %w", u.Spec, u.Uid, err)
	}
	for _, g := range append([]uint32{u.Gid}, u.Groups...) {
		if err := mapped("/proc/self/gid_map", g); err != nil {
			return fmt.Errorf("--user %s: gid %d: %w", u.Spec, g, err)
		}
	}
	return nil
}

// effectiveCaps is the calling thread's effective set (capget 0: this
// thread).
func effectiveCaps() (uint64, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return 0, os.NewSyscallError("capget", err)
	}
	return uint64(data[0].Effective) | uint64(data[1].Effective)<<32, nil
}

// mapped checks that id lies in one of the ranges of a uid_map or gid_map.
func mapped(path string, id uint32) error {
	f, err := os.Open(path)
	if err != nil {
		return nil // no user namespaces in this kernel: every id exists
	}
	defer f.Close() // read-only
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var inside, outside, count uint64
		if _, err := fmt.Sscan(sc.Text(), &inside, &outside, &count); err == nil && uint64(id) >= inside && uint64(id) < inside+count {
			return nil
		}
	}
	return fmt.Errorf("not mapped in shellsup's user namespace (%s)", path)
}

// Drop prepares the calling thread for forking bash as u: it empties the
// bounding set (where it may; for uid 0 it must), the inheritable and the
// ambient sets, and sets no_new_privs. The effective and permitted sets
// stay, for the child's setgroups, setgid and setuid; the exec then gives
// bash none (a non-root exec without file capabilities gains nothing from
// empty inheritable and ambient sets, and uid 0 with an empty bounding set
// gets nothing either; no_new_privs caps both at what the thread had).
//
// Every one of these is a property of the thread, not the process, and
// none can be undone: the caller locks the thread from before Drop and
// never unlocks it, so that the Go runtime retires it with its goroutine.
func Drop(u *User) error {
	if err := dropBounding(u.Uid == 0); err != nil {
		return err
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return os.NewSyscallError("capget", err)
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return os.NewSyscallError("capset", err)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(PR_CAP_AMBIENT_CLEAR_ALL)", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(PR_SET_NO_NEW_PRIVS)", err)
	}
	return nil
}

// dropBounding empties the thread's bounding set, capability by capability
// up to the kernel's last. Without CAP_SETPCAP the kernel refuses (EPERM):
// that is an error only when must is set.
func dropBounding(must bool) error {
	last := lastCap()
	for c := 0; c <= last; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		switch {
		case err == nil, err == unix.EINVAL: // EINVAL: past this kernel's last capability
		case err == unix.EPERM && !must:
			return nil
		default:
			return fmt.Errorf("emptying the capability bounding set: %w", os.NewSyscallError("prctl(PR_CAPBSET_DROP)", err))
		}
	}
	return nil
}

// lastCap is the kernel's highest capability number.
func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return n
		}
	}
	return 63 // every possible bit; the kernel says EINVAL past its last
}
