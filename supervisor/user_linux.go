package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/shellsup/shellsup/cgroup"
	"github.com/shellsup/shellsup/credential"
	"github.com/shellsup/shellsup/protocol"
)

// checkUser refuses --user where shellsup cannot take the identity (or
// could not signal the command at cleanup): without CAP_SETUID, CAP_SETGID
// and CAP_KILL, for ids its user namespace lacks, and with --pidns unless
// shellsup is root (a non-root shellsup makes a user namespace mapping its
// own uid only, where no other user exists).
func checkUser(cfg Config) error {
	if cfg.User == nil {
		return nil
	}
	if err := cfg.User.Permitted(); err != nil {
		return err
	}
	if cfg.PIDNamespace && os.Geteuid() != 0 {
		return fmt.Errorf("--user %s with --pidns: shellsup must run as root (not uid %d): a non-root shellsup makes a user namespace that maps only its own uid",
			cfg.User.Spec, os.Geteuid())
	}
	return nil
}

// forkFor forks bash as the run asks: on a thread in the leaf's v1
// cgroups, and, with --user, on a thread prepared by credential.Drop.
func forkFor(cfg Config, leaf *cgroup.Leaf, fork func() (int, error)) (int, error) {
	if cfg.User == nil {
		return forkInLeaf(leaf, fork)
	}
	return forkAsUser(leaf, cfg.User, fork)
}

// forkAsUser runs fork on a thread of its own, in the leaf's v1 cgroups
// when there are any, with its bounding, inheritable and ambient sets
// emptied and no_new_privs set (credential.Drop). None of that can be
// undone on the thread, so it stays locked and the Go runtime retires it
// when the goroutine ends (or, were it the main thread, parks it); the
// runtime never clones a new thread from a locked one.
func forkAsUser(leaf *cgroup.Leaf, u *credential.User, fork func() (int, error)) (int, error) {
	type result struct {
		pid int
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		restore := func() error { return nil }
		var r result
		if leaf != nil && leaf.HasV1() {
			restore, r.err = leaf.PlaceThread()
			if r.err != nil {
				r.err = fmt.Errorf("placing bash in the v1 limit cgroups: %w", r.err)
			}
		}
		if r.err == nil {
			if err := credential.Drop(u); err != nil {
				r.err = &userError{fmt.Errorf("--user %s: preparing the fork: %w", u.Spec, err)}
			} else {
				r.pid, r.err = fork()
			}
		}
		// Moved back even so, before the caller may remove the leaf: a
		// retired thread that was the main one is parked, not ended, and
		// must not hold the leaf.
		_ = restore()
		done <- r
	}()
	r := <-done
	return r.pid, r.err
}

// userError is a failure to give bash the user's identity: containment
// unavailable, nothing ran.
type userError struct{ err error }

func (e *userError) Error() string { return e.err.Error() }
func (e *userError) Unwrap() error { return e.err }

// runAs is the user as the start and totals frames report it.
func runAs(u *credential.User) *protocol.RunAs {
	if u == nil {
		return nil
	}
	return &protocol.RunAs{Name: u.Name, Uid: u.Uid, Gid: u.Gid, Group: u.Group, Groups: slices.Clone(u.Groups), Home: u.Home}
}

// describeUserExec explains an EACCES or EPERM of a fork as another user:
// the child's chdir and execve run as that user, and a working directory
// the user cannot reach is the usual cause.
func describeUserExec(err error, cfg Config) error {
	var ee *execError
	if cfg.User == nil || !errors.As(err, &ee) || (ee.errno != syscall.EACCES && ee.errno != syscall.EPERM) {
		return err
	}
	who := fmt.Sprintf("user %s (uid %d, gid %d)", cfg.User.Name, cfg.User.Uid, cfg.User.Gid)
	if dir := unsearchable(cfg.Cwd, cfg.User); dir != "" {
		ee.message = fmt.Sprintf("chdir %q as %s: %v: %s cannot search directory %q; choose a working directory the user can reach (--cwd)",
			cfg.Cwd, who, ee.errno, cfg.User.Name, dir)
		return ee
	}
	ee.message = fmt.Sprintf("%s as %s: the working directory %q and %s must be reachable and executable by that user", ee.message, who, cfg.Cwd, bashPath)
	return ee
}

// unsearchable is the first directory of path (from /) that u may not
// search by its mode bits, or "" (ACLs are not read: this only explains
// a refusal the kernel made).
func unsearchable(path string, u *credential.User) string {
	dir := "/"
	for _, part := range append([]string{""}, strings.Split(strings.Trim(path, "/"), "/")...) {
		dir = filepath.Join(dir, part)
		st, err := os.Stat(dir)
		if err != nil {
			return ""
		}
		sys, ok := st.Sys().(*syscall.Stat_t)
		if !ok {
			return ""
		}
		if !searchable(st.Mode().Perm(), sys.Uid, sys.Gid, u) {
			return dir
		}
	}
	return ""
}

func searchable(mode os.FileMode, uid, gid uint32, u *credential.User) bool {
	switch {
	case u.Uid == 0:
		return true // CAP_DAC_READ_SEARCH is gone, but uid 0 owns most of the path; the kernel's answer stands
	case uid == u.Uid:
		return mode&0o100 != 0
	case gid == u.Gid || slices.Contains(u.Groups, gid):
		return mode&0o010 != 0
	}
	return mode&0o001 != 0
}
