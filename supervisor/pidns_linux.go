package supervisor

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/cgroup"
	"github.com/shellsup/shellsup/pidns"
	"github.com/shellsup/shellsup/reaper"
	"github.com/shellsup/shellsup/request"
)

// nsStatusWait bounds the wait for bash's status from the PID-namespace
// init once shellsup's tree is empty (the init's exit ends it at once).
const nsStatusWait = time.Second

// leader is what a run watches for the command's end: the Waiter (bash is
// shellsup's child) or the PID-namespace init's report (bash is the init's).
type leader interface {
	LeaderExited() <-chan struct{}
	LeaderStatus() unix.WaitStatus
	// LeaderDone: bash has exited, whether or not it was reaped yet (an
	// exit that happened before the timer fired wins the tie).
	LeaderDone() bool
}

// spawnFor starts the command the way cfg asks: as shellsup's child, or
// under the init of a new PID namespace, whose tier it then adds to cont.
//
// shellsup is made non-dumpable (forbidDumps) before the command can exist;
// with --pidns only once the init is started, because an unprivileged
// init's uid and gid maps are written through its /proc entry, which a
// non-dumpable parent's fork would give to root. Nothing inside the
// namespace can see shellsup in that moment.
//
// With --pidns-auto a run without a v2 leaf goes into a namespace too, and
// one whose namespaces cannot be had here (an *pidns.UnavailableError:
// nothing of the command ran) falls back to the plain spawn, its sandbox
// planned again for it (--no-network then needs what a plain spawn has, or
// the run is refused).
func spawnFor(cfg Config, cont *reaper.Containment, leaf *cgroup.Leaf) (*child, error) {
	if inNamespace(cfg, leaf) {
		c, err := spawnInNamespace(cfg, cont, leaf)
		if err == nil {
			// prctl cannot fail with these arguments; and the command, inside
			// the namespace, cannot reach shellsup's /proc entry anyway.
			_ = forbidDumps()
		}
		if cfg.PIDNamespace || !isUnavailable(err) {
			return c, err
		}
		if err := checkSandbox(cfg, false); err != nil {
			return nil, &sandboxError{err}
		}
	}
	if err := forbidDumps(); err != nil {
		return nil, err
	}
	return spawn(cfg, leaf)
}

// inNamespace: the command runs under a PID-namespace init, asked for or
// chosen by --pidns-auto.
func inNamespace(cfg Config, leaf *cgroup.Leaf) bool {
	return cfg.PIDNamespace || autoNamespace(cfg, leaf)
}

// autoNamespace: --pidns-auto asks for a namespace, and the run has no
// cgroup v2 leaf, the one boundary the harness can still kill when
// shellsup is gone (README, "Tiers"), or has one the command can leave. A
// --max-procs below what the namespace's init needs keeps the run out of it.
func autoNamespace(cfg Config, leaf *cgroup.Leaf) bool {
	if !cfg.PIDNamespaceAuto || cfg.MaxProcs > 0 && cfg.MaxProcs < request.MinProcsPidns {
		return false
	}
	return leafDir(leaf) == "" || leavable(cfg, leafDir(leaf))
}

// leavable: an unprivileged command of shellsup's own uid may move its
// processes out of the leaf at dir, into the parent it was delegated
// (moving needs write access to the cgroup.procs of the common ancestor).
// A root command may leave any cgroup; for root the default stays the
// cgroup tier, without the namespace's cost, and the README's answer is
// --user or --pidns.
func leavable(cfg Config, dir string) bool {
	if os.Geteuid() == 0 || cfg.User != nil {
		return false
	}
	return unix.Access(filepath.Join(filepath.Dir(dir), "cgroup.procs"), unix.W_OK) == nil
}

// spawnInNamespace is spawn with the PID-namespace init between shellsup
// and bash: the same stdin, pipes, environment and working directory.
func spawnInNamespace(cfg Config, cont *reaper.Containment, leaf *cgroup.Leaf) (*child, error) {
	sio, err := openStdioFor(cfg)
	if err != nil {
		return nil, err
	}
	env := childEnv(os.Environ(), cfg)
	files := sio.files()
	spec := pidns.Spec{
		Command: cfg.Command, NoLogin: cfg.NoLogin, Cwd: cfg.startDir(), Env: env,
		Stdio: [3]uintptr{files[0], files[1], files[2]},
		User:  cfg.User, Sandbox: cfg.Sandbox,
	}
	if leaf != nil && leaf.CgroupFD() >= 0 {
		spec.UseCgroupFD, spec.CgroupFD = true, leaf.CgroupFD() // the init is born in the leaf
	}
	var in *pidns.Init
	_, err = forkInLeaf(leaf, func() (int, error) {
		in, err = pidns.Start(spec)
		return 0, err
	})
	sio.forked(err == nil) // the init's copies are the tree's
	if err != nil {
		var ee *pidns.ExecError
		if errors.As(err, &ee) {
			return nil, describeUserExec(describeExecError(ee.Errno, shellArgv(cfg), env, cfg.Cwd), cfg)
		}
		return nil, err
	}
	ignoreReservedSignals() // the init has its own dispositions now
	cont.AddTier(in)
	return &child{pid: in.Pid(), shownPid: in.BashPid(), stdout: sio.outR, stderr: sio.errR, ns: in, input: sio.sink(in.BashPid())}, nil
}

// leader is the init's report in a PID namespace, else the Waiter.
func (c *child) leader(w *reaper.Waiter) leader {
	if c.ns != nil {
		return c.ns
	}
	return w
}

// bashPid is bash's pid as shellsup's namespace numbers it.
func (c *child) bashPid() int {
	if c.shownPid != 0 {
		return c.shownPid
	}
	return c.pid
}

// settle waits, bounded, for the init's report once the tree is empty.
func settle(ld leader) {
	select {
	case <-ld.LeaderExited():
	case <-time.After(nsStatusWait):
	}
}

// isUnavailable: the tier the caller asked for cannot be had here.
func isUnavailable(err error) bool {
	var ue *pidns.UnavailableError
	return errors.As(err, &ue)
}
