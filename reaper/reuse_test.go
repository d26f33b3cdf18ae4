//go:build linux

package reaper

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/reaper/reapertest"
)

// The PID-reuse harness. Each TestReuse* test re-runs itself inside a new
// user + PID namespace (unshare), whose init is the launcher below: a bash
// that starts the test binary and, on request, starts "strangers" — processes
// outside the test's tree — at exact pids, by writing ns_last_pid just
// before it forks. Inside, the test builds a tree, starts a Cleanup, and at
// a chosen round (testHookVisit) kills members, waits until they are reaped,
// and has strangers take their pids. Then it checks that no stranger was
// signalled: each is a `sleep` that a SIGTERM or SIGKILL would end and a
// SIGSTOP would stop, so it must be alive, in state S or R, with nothing
// pending.

const reuseDirVar = "REAPER_REUSE_DIR"

// launcher is the namespace's init. A request "X Y T" starts a stranger at
// pid X (sleep 60), and if Y is not 0 that stranger first forks a child at
// pid Y; the reply is the stranger's pid. "done CODE" (the test binary
// exited) ends the namespace.
//
// Writing ns_last_pid and forking are two steps, and any task created in
// the namespace between them takes the pid meant for the stranger. The
// test's own tree is quiet while a request is served (the test waits for
// the reply), but the test binary is a Go program: its runtime may start a
// thread at any moment (a GC worker, a hand-off from a blocking syscall),
// and a thread takes a pid. So the launcher freezes the test binary T with
// SIGSTOP, waits until every one of its threads is stopped, forks the
// stranger (and waits for its child at Y), and only then sends SIGCONT:
// while T is stopped nothing can take the freed pids. Everything here is a
// bash builtin, so the launcher itself forks only the stranger.
const launcher = `
dir=$1; shift
mkfifo "$dir/req" "$dir/ack" || exit 1
exec 3<>"$dir/req" 4<>"$dir/ack"
("$@"; echo "done $?" >&3) &
stopped() { # every thread of $1 is in a stop
	local task line st
	for task in /proc/$1/task/*; do
		read -r line < "$task/stat" || continue
		st=${line##*) }; st=${st:0:1}
		[ "$st" = T ] || [ "$st" = t ] || return 1
	done
}
while read -r -u 3 x y t; do
	[ "$x" = done ] && exit "$y"
	kill -STOP "$t"
	until stopped "$t"; do :; done
	echo $((x-1)) > /proc/sys/kernel/ns_last_pid
	if [ "$y" = 0 ]; then
		sleep 60 &
	else
		bash -c "echo $((y-1)) > /proc/sys/kernel/ns_last_pid; sleep 60 & exec sleep 60" &
		for ((i = 0; i < 100000; i++)); do [ -e "/proc/$y" ] && break; done
	fi
	kill -CONT "$t"
	echo "$!" >&4
done
`

// inNamespace runs the calling test again inside a fresh user + PID
// namespace, and reports whether the caller is that inner run (then it
// does the work) or the outer one (then it is done).
func inNamespace(t *testing.T) (dir string, inner bool) {
	if dir := os.Getenv(reuseDirVar); dir != "" {
		return dir, true
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare not installed")
	}
	var out []byte
	var err error
	for try := 1; ; try++ {
		out, err = innerRun(t)
		if err == nil || !strings.Contains(string(out), pidTaken) || try == innerTries {
			break
		}
		// Inside the namespace, the Go runtime of the inner test binary
		// started a thread between the launcher's write of ns_last_pid and
		// its fork, and the thread took the pid meant for the stranger (it
		// happens when the whole module's tests load both CPUs). The shape
		// was never set up, so nothing was tested: set it up again in a
		// fresh namespace.
		t.Logf("try %d: a thread of the inner test binary took the stranger's pid; again in a new namespace", try)
	}
	if err != nil && strings.Contains(string(out), "unshare failed") {
		t.Skipf("cannot create a user+pid namespace here: %s", out)
	}
	require.NoError(t, err, "inner run:\n%s", out)
	require.Contains(t, string(out), "--- PASS: "+t.Name(), "inner run:\n%s", out)
	return "", false
}

// pidTaken is the inner run's failure when its stranger did not get the
// pid it was set up for; innerTries bounds the fresh namespaces tried.
const (
	pidTaken   = "the stranger did not get the freed pid (something else forked)"
	innerTries = 5
)

// innerRun runs the calling test once inside a fresh user + PID namespace.
func innerRun(t *testing.T) ([]byte, error) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount-proc",
		"bash", "-c", launcher, "launcher", dir,
		os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), reuseDirVar+"="+dir)
	cmd.WaitDelay = 5 * time.Second // the launcher may keep the output pipe open
	return cmd.CombinedOutput()
}

// launch asks the launcher for a stranger at pid x (and its child at y, if
// not 0), and returns the stranger and its child, as started.
type stranger struct{ proc }

func launch(t *testing.T, dir string, x, y int) []stranger {
	t.Helper()
	req, err := os.OpenFile(filepath.Join(dir, "req"), os.O_WRONLY, 0)
	require.NoError(t, err)
	defer req.Close()
	ack, err := os.Open(filepath.Join(dir, "ack"))
	require.NoError(t, err)
	defer ack.Close()
	_, err = fmt.Fprintf(req, "%d %d %d\n", x, y, os.Getpid())
	require.NoError(t, err)
	line, err := bufio.NewReader(ack).ReadString('\n')
	require.NoError(t, err)
	got, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	require.Equal(t, x, got, pidTaken)
	out := []stranger{{waitProc(t, x, "sleep")}}
	if y != 0 {
		out = append(out, stranger{waitProc(t, y, "sleep")})
		require.Equal(t, x, out[1].ppid, "the stranger's child is not at the freed pid %d", y)
	}
	return out
}

// waitProc waits until pid runs comm, and returns its stat.
func waitProc(t *testing.T, pid int, comm string) proc {
	t.Helper()
	d := procDir{root: "/proc"}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if p, err := d.stat(pid); err == nil && p.comm == comm {
			return p
		}
	}
	t.Fatalf("pid %d never ran %s", pid, comm)
	return proc{}
}

// freePid SIGKILLs a member of the tree and waits until it is reaped (by
// its parent, or by the Waiter), so its pid is free for a stranger.
func freePid(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
		return // the cleanup killed it already, and it was reaped
	}
	require.NoError(t, err, "member %d", pid)
	defer unix.Close(fd)
	require.NoError(t, unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0))
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); os.IsNotExist(err) {
			return
		}
	}
	t.Fatalf("member %d was never reaped", pid)
}

// unsignalled checks that a stranger is the same process, alive, not
// stopped, and has no signal pending.
func unsignalled(t *testing.T, s stranger) {
	t.Helper()
	d := procDir{root: "/proc"}
	now, err := d.stat(s.pid)
	require.NoError(t, err, "stranger %d is gone: it was signalled", s.pid)
	require.Equal(t, s.start, now.start, "stranger %d is gone: its pid names another process", s.pid)
	assert.Contains(t, "SR", string(now.state), "stranger %d is in state %c", s.pid, now.state)
	status, err := os.ReadFile("/proc/" + strconv.Itoa(s.pid) + "/status")
	require.NoError(t, err)
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "SigPnd:") || strings.HasPrefix(line, "ShdPnd:") {
			assert.Equal(t, "0000000000000000", strings.TrimSpace(line[7:]), "stranger %d: %s", s.pid, line)
		}
	}
}

// reuseTree is the tree every shape starts from: bash (the leader) with a
// subshell P whose children are D1 and D2, and K, a child of the test (an
// orphan: its parent exited). Everything ignores SIGTERM, so the cleanup
// goes through every phase.
type reuseTree struct {
	w            *Waiter
	tok          reapertest.Token
	p, d1, d2, k int
}

func newReuseTree(t *testing.T) reuseTree {
	dir := t.TempDir()
	w, tok := tree(t, fmt.Sprintf(`trap '' TERM; cd %s
(sleep 300 & echo $! > d1; sleep 300 & echo $! > d2; echo $BASHPID > p; wait) &
(sleep 300 & echo $! > k) &
while [ ! -s d1 ] || [ ! -s d2 ] || [ ! -s p ] || [ ! -s k ]; do sleep 0.01; done
touch ready; wait`, dir))
	waitFile(t, filepath.Join(dir, "ready"))
	num := func(name string) int {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		require.NoError(t, err)
		return n
	}
	rt := reuseTree{w: w, tok: tok, p: num("p"), d1: num("d1"), d2: num("d2"), k: num("k")}
	waitProc(t, rt.d1, "sleep")
	waitProc(t, rt.d2, "sleep")
	waitProc(t, rt.k, "sleep")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		p, err := (&procDir{root: "/proc"}).stat(rt.k)
		require.NoError(t, err)
		if p.ppid == os.Getpid() {
			break
		}
		require.True(t, time.Now().Before(deadline), "K never became a child of the test")
	}
	return rt
}

// reuseShape runs one shape: at the first visit of phase (its n-th visit
// of that phase, counting from 1), act frees pids and starts strangers.
func reuseShape(t *testing.T, phase string, n int, act func(t *testing.T, dir string, rt reuseTree) []stranger) {
	dir, inner := inNamespace(t)
	if !inner {
		return
	}
	rt := newReuseTree(t)
	var strangers []stranger
	seen := 0
	testHookVisit = func(ph string, round int) {
		if ph == phase {
			if seen++; seen == n {
				strangers = act(t, dir, rt)
			}
		}
	}
	defer func() { testHookVisit = nil }()
	rep := subreaper(t).Cleanup(rt.w, Deadlines{Grace: 500 * time.Millisecond, Kill: 3 * time.Second})
	testHookVisit = nil
	require.NotEmpty(t, strangers, "the hook never ran (phase %s, visit %d)", phase, n)
	assert.True(t, rep.Clean(), "stragglers: %v", rep.Stragglers)
	for _, s := range strangers {
		unsignalled(t, s)
	}
	reapertest.Check(t, rt.tok)
	for _, s := range strangers {
		_ = unix.Kill(s.pid, unix.SIGKILL) // verified above to be the stranger; the launcher reaps it
	}
}

// A deeper descendant dies during the TERM scans and a stranger takes its pid.
func TestReuseStrangerTakesDescendantPid(t *testing.T) {
	reuseShape(t, "term", 3, func(t *testing.T, dir string, rt reuseTree) []stranger {
		freePid(t, rt.d1)
		return launch(t, dir, rt.d1, 0)
	})
}

// Two siblings die; a stranger takes the first pid and its child the
// second: the child's parent pid is a former member's pid.
func TestReuseStrangersChildTakesSecondPid(t *testing.T) {
	reuseShape(t, "term", 3, func(t *testing.T, dir string, rt reuseTree) []stranger {
		freePid(t, rt.d1)
		freePid(t, rt.d2)
		return launch(t, dir, rt.d1, rt.d2)
	})
}

// A parent and its child die in one round; a stranger takes the parent's
// pid and its child the child's pid: the recorded parent link matches.
func TestReuseParentAndChildPids(t *testing.T) {
	reuseShape(t, "term", 3, func(t *testing.T, dir string, rt reuseTree) []stranger {
		freePid(t, rt.p)
		freePid(t, rt.d1)
		return launch(t, dir, rt.p, rt.d1)
	})
}

// A child of the test (shellsup's role) is reaped by the Waiter and a
// stranger takes its pid, with a child at a freed descendant's pid.
func TestReuseShellsupChildPid(t *testing.T) {
	reuseShape(t, "term", 3, func(t *testing.T, dir string, rt reuseTree) []stranger {
		freePid(t, rt.k)
		freePid(t, rt.d2)
		return launch(t, dir, rt.k, rt.d2)
	})
}

// Stopped members die during the STOP fixpoint and strangers take their
// pids. Their stopped parents cannot reap them, so the chain is killed from
// the top: each is then reaped by the Waiter, as an orphan.
func TestReuseDuringStopFixpoint(t *testing.T) {
	reuseShape(t, "stop", 2, func(t *testing.T, dir string, rt reuseTree) []stranger {
		for _, pid := range []int{rt.w.leader, rt.p, rt.d1, rt.d2} {
			freePid(t, pid)
		}
		return append(launch(t, dir, rt.p, rt.d1), launch(t, dir, rt.d2, 0)...)
	})
}

// Members die just before the KILL pass, which signals from memory: a
// descendant's pid and a child's pid are taken by strangers.
func TestReuseBeforeKillPass(t *testing.T) {
	reuseShape(t, "kill", 1, func(t *testing.T, dir string, rt reuseTree) []stranger {
		for _, pid := range []int{rt.w.leader, rt.p, rt.d1, rt.k} {
			freePid(t, pid)
		}
		return append(launch(t, dir, rt.d1, 0), launch(t, dir, rt.k, rt.p)...)
	})
}

// A stranger takes a dead member's pid and forks a child at a pid never
// used in the namespace: the child's parent pid is a former member's, and
// nothing else about it is known. It must not be taken for a descendant.
func TestReuseStrangersChildAtFreshPid(t *testing.T) {
	reuseShape(t, "term", 3, func(t *testing.T, dir string, rt reuseTree) []stranger {
		freePid(t, rt.d1)
		return launch(t, dir, rt.d1, 3000)
	})
}

// TestReuseLeaderPidReapedLater: after bash (the leader) exits 3 and is
// reaped, a process of its tree takes bash's freed pid (freezing the test
// binary while it writes ns_last_pid and forks, as the launcher does) and
// is orphaned, so the Waiter reaps it too, under the leader's pid, exit 0.
// The leader's status stays 3. Before, the later reap overwrote it.
func TestReuseLeaderPidReapedLater(t *testing.T) {
	dir, inner := inNamespace(t)
	if !inner {
		return
	}
	reserveThreads() // as Setup does: a thread the runtime started later would take the freed pid
	took := filepath.Join(dir, "took")
	// The helper leaves bash's session at once (setsid): a pid stays
	// allocated while it names a live session or process group.
	helper := fmt.Sprintf(`leader=$1 harness=$2
stopped() {
	local task line st
	for task in /proc/$1/task/*; do
		read -r line < "$task/stat" || continue
		st=${line##*) }; st=${st:0:1}
		[ "$st" = T ] || [ "$st" = t ] || return 1
	done
}
for ((i = 0; i < 1000000; i++)); do kill -0 $leader 2>/dev/null || break; done
kill -STOP $harness
until stopped $harness; do :; done
echo $((leader - 1)) > /proc/sys/kernel/ns_last_pid
sleep 0.2 &
kill -CONT $harness
echo "$! $leader" > %s`, took)
	w, _ := tree(t, `setsid bash -c '`+helper+`' helper $$ $PPID &
exit 3`)
	select {
	case <-w.Empty():
	case <-time.After(30 * time.Second):
		t.Fatal("the tree did not empty")
	}
	b, err := os.ReadFile(took)
	require.NoError(t, err)
	f := strings.Fields(string(b))
	require.Len(t, f, 2, "%q", b)
	require.Equal(t, f[1], f[0], "the orphan took the leader's pid")
	assert.Equal(t, 3, w.LeaderStatus().ExitStatus(), "the leader's status, not the later child's under its pid")
}
