package pidns

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/reaper/reapertest"
)

// The test binary is its own init: Start re-executes /proc/self/exe.
func TestMain(m *testing.M) {
	MaybeInit()
	os.Exit(m.Run())
}

// start runs command under a fresh init with stdout on a pipe the test
// reads, and a clean HOME.
func start(t *testing.T, tok reapertest.Token, command string) (*Init, *bufio.Reader) {
	t.Helper()
	return startIn(t, tok, command, -1)
}

// startIn is start, the init in the cgroup cg (-1: none).
func startIn(t *testing.T, tok reapertest.Token, command string, cg int) (*Init, *bufio.Reader) {
	t.Helper()
	devnull, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer devnull.Close()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	home := t.TempDir()
	in, err := Start(Spec{
		Command: command, Cwd: home,
		Env:         append(os.Environ(), "HOME="+home, tok.Env()),
		Stdio:       [3]uintptr{devnull.Fd(), w.Fd(), devnull.Fd()},
		UseCgroupFD: cg >= 0, CgroupFD: cg,
	})
	w.Close()
	require.NoError(t, err)
	return in, bufio.NewReader(r)
}

// waitInit reaps the init (the test is its parent) and returns its status.
func waitInit(t *testing.T, in *Init) unix.WaitStatus {
	t.Helper()
	var ws unix.WaitStatus
	_, err := unix.Wait4(in.Pid(), &ws, 0, nil)
	require.NoError(t, err)
	return ws
}

func awaitExited(t *testing.T, in *Init) {
	t.Helper()
	select {
	case <-in.LeaderExited():
	case <-time.After(10 * time.Second):
		t.Fatal("bash's status never came")
	}
}

func TestBashStatusIsReported(t *testing.T) {
	tok := reapertest.NewToken()
	in, out := start(t, tok, "echo pid $$ ppid $PPID; sleep 0.5; exit 7")
	line, err := out.ReadString('\n')
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(line, " ppid 1\n"), "bash's parent is the init, pid 1: %q", line)
	assert.NotEqual(t, in.Pid(), in.BashPid())
	awaitExited(t, in)
	assert.True(t, in.LeaderStatus().Exited())
	assert.Equal(t, 7, in.LeaderStatus().ExitStatus())
	ws := waitInit(t, in)
	assert.Equal(t, 7, ws.ExitStatus(), "the init exits with bash's status")
	require.NoError(t, in.Close())
	reapertest.Check(t, tok)
}

func TestInitOutlivesBashUntilItsChildrenAreGone(t *testing.T) {
	tok := reapertest.NewToken()
	in, _ := start(t, tok, "sleep 300 & exit 0")
	awaitExited(t, in)
	assert.Equal(t, 0, in.LeaderStatus().ExitStatus())
	var ws unix.WaitStatus
	pid, err := unix.Wait4(in.Pid(), &ws, unix.WNOHANG, nil)
	require.NoError(t, err)
	assert.Equal(t, 0, pid, "the init still reaps for the background sleep")
	assert.NotEmpty(t, reapertest.Find(tok))
	require.NoError(t, in.Kill())
	ws = waitInit(t, in)
	assert.Equal(t, unix.SIGKILL, ws.Signal())
	require.NoError(t, in.Close())
	reapertest.Check(t, tok)
}

func TestKillTakesTheNamespaceDown(t *testing.T) {
	tok := reapertest.NewToken()
	in, out := start(t, tok, "trap '' TERM; setsid sleep 300 & (trap '' TERM; sleep 300) & echo ready; sleep 300")
	line, err := out.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)
	assert.Equal(t, "pidns", in.Name())
	require.NoError(t, in.Term()) // nothing: the /proc walk does the signalling
	require.NoError(t, in.Kill())
	ws := waitInit(t, in)
	assert.Equal(t, unix.SIGKILL, ws.Signal())
	awaitExited(t, in)
	assert.Equal(t, unix.SIGKILL, in.LeaderStatus().Signal(), "bash went down with the namespace")
	assert.Empty(t, reapertest.Find(tok), "the init's death took every process of the namespace")
	require.NoError(t, in.Close())
	require.NoError(t, in.Close(), "Close is idempotent")
}

// TestInitIntoCgroup: a cgroup tier can have the init, and so the whole
// namespace, start in its leaf (CLONE_INTO_CGROUP).
func TestInitIntoCgroup(t *testing.T) {
	const root = "/sys/fs/cgroup/unified"
	var st unix.Statfs_t
	if unix.Statfs(root, &st) != nil || st.Type != unix.CGROUP2_SUPER_MAGIC || unix.Access(root, unix.W_OK) != nil {
		t.Skip("no writable cgroup2 at " + root)
	}
	leaf, err := os.MkdirTemp(root, "shellsup-pidns-test-")
	require.NoError(t, err)
	defer func() {
		for deadline := time.Now().Add(10 * time.Second); os.Remove(leaf) != nil && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond) // the last member is leaving
		}
	}()
	fd, err := unix.Open(leaf, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	tok := reapertest.NewToken()
	in, out := startIn(t, tok, "echo ready; sleep 300", fd)
	line, err := out.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)
	b, err := os.ReadFile(leaf + "/cgroup.procs")
	require.NoError(t, err)
	procs := strings.Fields(string(b))
	assert.Contains(t, procs, strconv.Itoa(in.Pid()), "the init is in the leaf")
	assert.Contains(t, procs, strconv.Itoa(in.BashPid()), "and bash with it")
	require.NoError(t, in.Kill())
	waitInit(t, in)
	require.NoError(t, in.Close())
	reapertest.Check(t, tok)
}
