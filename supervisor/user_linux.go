package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/shellsup/shellsup/cgroup"
	"github.com/shellsup/shellsup/credential"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/sandbox"
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
// cgroups, and, with --user or a sandbox, on a thread prepared for it.
func forkFor(cfg Config, leaf *cgroup.Leaf, fork func() (int, error)) (int, error) {
	if cfg.User == nil && !cfg.Sandbox.Active() {
		return forkInLeaf(leaf, fork)
	}
	return forkPrepared(leaf, cfg, fork)
}

// forkPrepared runs fork on a thread of its own, never the main one
// (sandbox.OnThread), in the leaf's v1 cgroups when there are any,
// prepared by prepareThread (--user: bounding, inheritable and ambient
// sets emptied and no_new_privs set; a sandbox: its network namespace and
// Landlock rules). None of that can be undone on the thread, so it stays
// locked and the Go runtime retires it when the goroutine ends; the
// runtime never clones a new thread from a locked one. The thread is moved
// back out of the v1 cgroups from the caller's thread, while it still
// lives: Landlock forbids it to write the cgroup files itself.
func forkPrepared(leaf *cgroup.Leaf, cfg Config, fork func() (int, error)) (int, error) {
	type result struct {
		pid     int
		err     error
		restore func() error
	}
	done := make(chan result, 1)
	moved := make(chan struct{})
	go sandbox.OnThread(func() {
		r := result{restore: func() error { return nil }}
		if leaf != nil && leaf.HasV1() {
			r.restore, r.err = leaf.PlaceThread()
			if r.err != nil {
				r.err = fmt.Errorf("placing bash in the v1 limit cgroups: %w", r.err)
			}
		}
		if r.err == nil {
			if r.err = prepareThread(cfg); r.err == nil {
				r.pid, r.err = fork()
			}
		}
		done <- r
		<-moved // the thread's id stays its own until it is moved back
	})
	r := <-done
	// Moved back even so, before the caller may remove the leaf: a thread
	// the runtime has not retired yet must not hold it. A failure leaves the
	// leaf for the sweep (LeafLeft).
	_ = r.restore()
	close(moved)
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
