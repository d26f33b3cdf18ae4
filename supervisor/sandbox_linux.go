package supervisor

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/cgroup"
	"github.com/shellsup/shellsup/credential"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/sandbox"
)

// checkSandbox decides how the sandbox is enforced, with what the kernel
// offers, or refuses it (containment unavailable): before anything is
// spawned, never a run with less than was asked for. pidns: the command
// runs under a PID-namespace init (--pidns, or --pidns-auto's answer),
// whose namespaces get the network namespace of --no-network.
func checkSandbox(cfg Config, pidns bool) error {
	if cfg.Sandbox == nil {
		return nil
	}
	k := seamSandboxKernel(sandbox.Probe())
	return sandbox.Plan(cfg.Sandbox, k, sandbox.Host{Root: os.Geteuid() == 0 && canAdmin(), PIDNS: pidns, User: cfg.User != nil})
}

// canAdmin: shellsup has CAP_SYS_ADMIN, which a network namespace made
// without a user namespace needs (a root without it, in a container, gets
// the Landlock TCP rules instead).
func canAdmin() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[unix.CAP_SYS_ADMIN/32].Effective&(1<<(unix.CAP_SYS_ADMIN%32)) != 0
}

// makeTmp makes the private TMPDIR of a filesystem sandbox, the --user
// user's when there is one.
func makeTmp(cfg Config) error {
	if !cfg.Sandbox.FS() {
		return nil
	}
	uid, gid := 0, 0
	if cfg.User != nil {
		uid, gid = int(cfg.User.Uid), int(cfg.User.Gid)
	}
	tag, err := cgroup.Tag("/proc")
	if err != nil {
		return fmt.Errorf("making the private TMPDIR: %w", err)
	}
	dir, err := sandbox.MakeTmp(tag, cfg.User != nil, uid, gid)
	if err != nil {
		return err
	}
	cfg.Sandbox.TmpDir = dir
	return nil
}

// removeTmp removes the private TMPDIR once the tree is gone (gone is
// false while a straggler lives: the directory is then left, untouched):
// the entries removed, or the directory left (its error said on the human
// line).
func removeTmp(cfg Config, gone bool) (removed int, left string, err error) {
	if cfg.Sandbox == nil || cfg.Sandbox.TmpDir == "" {
		return 0, "", nil
	}
	if !gone {
		return 0, cfg.Sandbox.TmpDir, fmt.Errorf("left the private TMPDIR %q: a process of the command survived the cleanup", cfg.Sandbox.TmpDir)
	}
	n, err := sandbox.RemoveTmp(cfg.Sandbox.TmpDir)
	if err != nil {
		return 0, cfg.Sandbox.TmpDir, err
	}
	return n, "", nil
}

// sandboxEnv points TMPDIR at the private one.
func sandboxEnv(env []string, p *sandbox.Policy) []string {
	if p == nil || p.TmpDir == "" {
		return env
	}
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") })
	return append(env, "TMPDIR="+p.TmpDir)
}

// prepareThread readies the forking thread as the run asks: in the
// sandbox's network namespace, with credential.Drop for --user, under the
// sandbox's Landlock rules (last: they forbid nothing the other steps do,
// but keep the order plain). Nothing of it can be undone on the thread.
func prepareThread(cfg Config) error {
	p := cfg.Sandbox
	if p != nil && p.NetNS {
		if err := sandbox.EnterNetwork(); err != nil {
			return &sandboxError{err}
		}
	}
	if cfg.User != nil {
		if err := credential.Drop(cfg.User); err != nil {
			return &userError{fmt.Errorf("--user %s: preparing the fork: %w", cfg.User.Spec, err)}
		}
	}
	if p != nil {
		if err := sandbox.Restrict(p); err != nil {
			return &sandboxError{fmt.Errorf("--sandbox %s: enforcing the Landlock rules: %w", p.Mode, err)}
		}
	}
	return nil
}

// sandboxError is a failure to enforce the sandbox: containment
// unavailable, nothing ran.
type sandboxError struct{ err error }

func (e *sandboxError) Error() string { return e.err.Error() }
func (e *sandboxError) Unwrap() error { return e.err }

// sandboxReport is the sandbox as start and totals report it.
func sandboxReport(p *sandbox.Policy) *protocol.Sandbox {
	if p == nil {
		return nil
	}
	w := p.Writable()
	if w == nil {
		w = []string{} // an empty list on the wire, not nil
	}
	return &protocol.Sandbox{Mode: p.Mode, Writable: w, Network: p.Network(), Via: p.Via(), TmpDir: p.TmpDir}
}

// sweepTmp removes the private TMPDIRs of shellsups killed before their
// cleanup, judged as their leaves are (cgroup.StaleTags).
func sweepTmp() ([]sandbox.SweptTmp, error) {
	stale, err := cgroup.StaleTags("/proc")
	if err != nil {
		return nil, err
	}
	return sandbox.SweepTmp(stale)
}
