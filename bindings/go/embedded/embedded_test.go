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
	res := run(t, shellsup.Request{Command: `readlink /proc/$PPID/exe`, Binary: bin})
	assert.Equal(t, bin+"\n", res.Stdout)
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
