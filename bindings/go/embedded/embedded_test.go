//go:build linux

package embedded_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"

	shellsup "github.com/shellsup/shellsup/bindings/go"
	"github.com/shellsup/shellsup/bindings/go/embedded"
	"github.com/shellsup/shellsup/internal/embedmode"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// The test binary is the harness: Init comes first, as in a harness's
// main. With no $SHELLSUP_BIN and an empty $PATH, every Run in these tests
// re-executes this test binary as the supervisor.
func TestMain(m *testing.M) {
	embedded.Init()
	os.Exit(testMain(m))
}

// goBin is the go command, found before $PATH is narrowed.
var goBin string

func testMain(m *testing.M) int {
	var err error
	if goBin, err = exec.LookPath("go"); err != nil {
		fmt.Fprintln(os.Stderr, "these tests build Go programs:", err)
		return 1
	}
	// The go command's caches live under HOME by default: pin them before
	// HOME changes, so that builds stay warm and offline.
	for _, name := range []string{"GOPATH", "GOMODCACHE", "GOCACHE"} {
		out, err := exec.Command(goBin, "env", name).Output()
		if err != nil {
			fmt.Fprintf(os.Stderr, "go env %s: %v\n", name, err)
			return 1
		}
		os.Setenv(name, strings.TrimSpace(string(out)))
	}
	home, err := os.MkdirTemp("", "shellsup-embedded-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(home)
	os.Setenv("HOME", home) // a login shell would source a heavy ~/.profile
	os.Unsetenv(shellsup.BinaryEnv)
	os.Setenv("PATH", "/usr/bin:/bin")
	if _, err := exec.LookPath("shellsup"); err == nil {
		fmt.Fprintln(os.Stderr, "a shellsup is on /usr/bin:/bin; these tests need none there")
		return 1
	}
	if err := reapertest.BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "becoming a child subreaper:", err)
		return 1
	}
	return m.Run()
}

// run runs command with the leak token and checks nothing it started survives.
func run(t *testing.T, req shellsup.Request) shellsup.Result {
	t.Helper()
	tok := reapertest.NewToken()
	req.Env = append(os.Environ(), tok.Env())
	res, err := shellsup.Run(context.Background(), req)
	require.NoError(t, err)
	reapertest.Check(t, tok)
	return res
}

func TestTheProgramItselfIsTheSupervisor(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	// bash's parent is the supervisor: this test binary, re-executed.
	res := run(t, shellsup.Request{Command: `readlink /proc/$PPID/exe; setsid sleep 300 & exit 4`})
	assert.Equal(t, self+"\n", res.Stdout)
	assert.Equal(t, 4, res.ExitCode)
	assert.Equal(t, proctest.Containment(false), res.Cleanup.Tier)
	assert.GreaterOrEqual(t, res.Cleanup.Signalled, 1) // the setsid sleep was killed
}

func TestTheMarkerDoesNotReachTheCommand(t *testing.T) {
	res := run(t, shellsup.Request{Command: `env | grep -c ` + embedmode.MarkerName + ` || true`})
	assert.Equal(t, "0\n", res.Stdout)
}

func TestAnExplicitBinaryStillWins(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "shellsup")
	build := exec.Command(goBin, "build", "-o", bin, "./cmd/shellsup")
	build.Dir = filepath.Join("..", "..", "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	res := run(t, shellsup.Request{Command: `readlink /proc/$PPID/exe; tr '\0' ' ' </proc/$PPID/cmdline`, Binary: bin})
	// The binding runs its sealed copy of bin (a memfd), with bin as argv[0].
	assert.Equal(t, "/memfd:shellsup (deleted)\n"+bin+" ", res.Stdout[:min(len(res.Stdout), len("/memfd:shellsup (deleted)\n"+bin+" "))])
}

// Validation, timeouts and the result keys are the binary's: the supervisor
// is the same code.
func TestTheEmbeddedSupervisorTimesOut(t *testing.T) {
	res := run(t, shellsup.Request{Command: `echo started; exec sleep 300`, Timeout: time.Second, Grace: new(time.Duration(0))})
	assert.True(t, res.TimedOut)
	assert.Equal(t, "started\n", res.Stdout)
	assert.True(t, strings.HasPrefix(res.Signal, "SIG"), res.Signal)
}

// --user works in embedded mode too, in the PID namespace as well (its
// init is this test binary, re-executed).
func TestTheEmbeddedSupervisorRunsAsAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("--user needs the supervisor to run as root")
	}
	for _, pidns := range []bool{false, true} {
		res := run(t, shellsup.Request{Command: `setsid sleep 300 </dev/null >/dev/null 2>&1 & id -un; ls /proc/$PPID/fd >/dev/null 2>&1 || echo refused`,
			User: "nobody", Cwd: "/", PIDNamespace: pidns})
		assert.Equal(t, "nobody\nrefused\n", res.Stdout, "pidns %v: %s", pidns, res.Stderr)
	}
}

// The embedded supervisor runs with the binary's runtime settings: the Go
// runtime holds no cgroup file open (containermaxprocs=0, which the binary
// sets with a //go:debug directive), so its low fds stay free for the
// cleanup, while the command sees the harness's own $GODEBUG.
func TestTheEmbeddedSupervisorHasTheBinarysRuntimeSettings(t *testing.T) {
	t.Setenv("GODEBUG", "harness=1")
	res := run(t, shellsup.Request{Command: `echo "GODEBUG=$GODEBUG${` + embedmode.SavedGodebugName + `+ and saved}"; tr '\0' '\n' < /proc/$PPID/environ | grep '^GODEBUG='; for f in /proc/$PPID/fd/*; do readlink "$f"; done`})
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	require.GreaterOrEqual(t, len(lines), 2, res.Stdout)
	assert.Equal(t, "GODEBUG=harness=1", lines[0], "the command's GODEBUG is the harness's")
	assert.Equal(t, "GODEBUG=harness=1,"+embedmode.Godebug, lines[1], "the supervisor started with the binary's settings")
	for _, l := range lines[2:] {
		// The runtime's CPU-limit files (cgroup v2, v1): the leaf's own
		// cgroup files are the cleanup's.
		assert.NotRegexp(t, `/(cpu\.max|cpu\.cfs_quota_us|cpu\.cfs_period_us)$`, l, "an fd the supervisor's runtime holds")
	}
}

// TestTheEmbeddedSupervisorCleansUpWithNoFd: the command lowers the
// embedded supervisor's RLIMIT_NOFILE to 3:3 (no fd can be opened: 0–2 are
// taken) and leaves a setsid sleeper: it is gone at return and the cleanup
// reports nothing left, as with the binary.
func TestTheEmbeddedSupervisorCleansUpWithNoFd(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "sleeper.pid")
	res := run(t, shellsup.Request{Command: fmt.Sprintf(`prlimit --pid $PPID --nofile=3:3 || exit 9
grep '^Max open files' /proc/$PPID/limits
setsid sh -c 'echo $$ > %s; exec sleep 120' &
(trap '' TERM; sleep 120 & wait) &
for i in $(seq 500); do [ -s %[1]s ] && break; sleep 0.01; done`, pidFile), Grace: new(300 * time.Millisecond)})
	require.Regexp(t, `Max open files\s+3\s+3\s`, res.Stdout, res.Stderr)
	assert.Empty(t, res.Cleanup.Stragglers)
	assert.GreaterOrEqual(t, res.Cleanup.Signalled, 2)
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	_, err = os.Stat("/proc/" + strings.TrimSpace(string(b)))
	assert.True(t, os.IsNotExist(err), "the setsid sleeper %s is gone", b)
}
