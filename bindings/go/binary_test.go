package shellsup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/embedmode"
)

// layout is a set of places that each may hold a shellsup (a symlink to the
// real binary), and a lookup that sees only them.
type layout struct {
	real    string // the binary under test
	program string // where the calling program pretends to live
	pathDir string // the only $PATH entry
}

func newLayout(t *testing.T) layout {
	t.Helper()
	l := layout{real: os.Getenv(BinaryEnv), pathDir: filepath.Join(t.TempDir(), "path")}
	require.NotEmpty(t, l.real, "TestMain sets $%s", BinaryEnv)
	progDir := filepath.Join(t.TempDir(), "program")
	require.NoError(t, os.MkdirAll(progDir, 0o755))
	require.NoError(t, os.MkdirAll(l.pathDir, 0o755))
	l.program = filepath.Join(progDir, "harness")
	old := executable
	executable = func() (string, error) { return l.program, nil }
	t.Cleanup(func() { executable = old; embedmode.Reset() })
	t.Setenv(BinaryEnv, "")
	t.Setenv("PATH", l.pathDir)
	return l
}

// put links the real binary to dir/shellsup.
func (l layout) put(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "shellsup")
	require.NoError(t, os.Symlink(l.real, p))
	return p
}

func TestDiscoveryOrder(t *testing.T) {
	t.Run("Request.Binary first", func(t *testing.T) {
		l := newLayout(t)
		t.Setenv(BinaryEnv, l.put(t, t.TempDir()))
		embedmode.Register(l.program, nil)
		l.put(t, filepath.Dir(l.program))
		l.put(t, l.pathDir)
		explicit := l.put(t, t.TempDir())
		got, err := findBinary(explicit)
		require.NoError(t, err)
		assert.Equal(t, explicit, got)
	})
	t.Run("then $SHELLSUP_BIN", func(t *testing.T) {
		l := newLayout(t)
		env := l.put(t, t.TempDir())
		t.Setenv(BinaryEnv, env)
		embedmode.Register(l.program, nil)
		l.put(t, filepath.Dir(l.program))
		got, err := findBinary("")
		require.NoError(t, err)
		assert.Equal(t, env, got)
	})
	t.Run("then the embedded supervisor", func(t *testing.T) {
		l := newLayout(t)
		embedmode.Register(l.program, nil)
		l.put(t, filepath.Dir(l.program))
		l.put(t, l.pathDir)
		got, err := findBinary("")
		require.NoError(t, err)
		assert.Equal(t, l.program, got)
	})
	t.Run("then next to the program", func(t *testing.T) {
		l := newLayout(t)
		next := l.put(t, filepath.Dir(l.program))
		l.put(t, l.pathDir)
		got, err := findBinary("")
		require.NoError(t, err)
		assert.Equal(t, next, got)
	})
	t.Run("then $PATH", func(t *testing.T) {
		l := newLayout(t)
		onPath := l.put(t, l.pathDir)
		got, err := findBinary("")
		require.NoError(t, err)
		assert.Equal(t, onPath, got)
		// And a run really uses it.
		res, err := Run(context.Background(), Request{Command: "printf found"})
		require.NoError(t, err)
		assert.Equal(t, "found", res.Stdout)
	})
	t.Run("a program named shellsup does not run itself", func(t *testing.T) {
		l := newLayout(t)
		self := l.put(t, filepath.Dir(l.program))
		executable = func() (string, error) { return self, nil }
		onPath := l.put(t, l.pathDir)
		got, err := findBinary("")
		require.NoError(t, err)
		assert.Equal(t, onPath, got)
	})
}

func TestNotFoundListsEveryPlace(t *testing.T) {
	l := newLayout(t)
	_, err := findBinary("")
	var e *Error
	require.True(t, errors.As(err, &e), "%v", err)
	assert.Equal(t, CategoryNotFound, e.Category)
	assert.ErrorIs(t, err, exec.ErrNotFound)
	places := []string{
		"Request.Binary (empty)",
		"$SHELLSUP_BIN (not set)",
		"the embedded supervisor (embedded.Init not called)",
		filepath.Join(filepath.Dir(l.program), "shellsup") + " (next to the program: does not exist)",
		`"shellsup" in $PATH (` + l.pathDir + `): not found`,
	}
	assert.Contains(t, e.Message, "looked at "+strings.Join(places, "; ")+"; ")
}

func TestNotFoundWhenTheProgramPathIsUnknown(t *testing.T) {
	newLayout(t)
	executable = func() (string, error) { return "", errors.New("no /proc/self/exe") }
	_, err := findBinary("")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "next to the program (its path is unknown: no /proc/self/exe)")

	embedmode.Register("", errors.New("no /proc/self/exe"))
	_, err = findBinary("")
	assert.Contains(t, err.Error(), "the embedded supervisor (embedded.Init was called, but the program's own path is unknown: no /proc/self/exe)")
}

func TestNextToTheProgramIsNotExecutable(t *testing.T) {
	l := newLayout(t)
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(l.program), "shellsup"), nil, 0o644))
	onPath := l.put(t, l.pathDir)
	got, err := findBinary("")
	require.NoError(t, err)
	assert.Equal(t, onPath, got)
}

// The marker goes only to the re-executed program, never to another binary.
func TestSupervisorEnvMarksOnlyTheEmbeddedSupervisor(t *testing.T) {
	l := newLayout(t)
	assert.Nil(t, supervisorEnv(l.real, nil))
	embedmode.Register(l.program, nil)
	assert.Equal(t, []string{"A=1"}, supervisorEnv(l.real, []string{"A=1"}))
	godebug := "GODEBUG=" + embedmode.Godebug
	assert.Equal(t, []string{"A=1", godebug, embedmode.Marker}, supervisorEnv(l.program, []string{"A=1"}))
	assert.Equal(t, []string{godebug, embedmode.Marker}, supervisorEnv(l.program, []string{}))
	// The harness's own GODEBUG comes first (the supervisor's settings win)
	// and is saved for the command.
	assert.Equal(t, []string{"A=1", embedmode.SavedGodebugName + "=x=1", "GODEBUG=x=1," + embedmode.Godebug, embedmode.Marker},
		supervisorEnv(l.program, []string{"GODEBUG=x=1", "A=1"}))
	inherited := supervisorEnv(l.program, nil)
	assert.Equal(t, embedmode.SupervisorEnv(os.Environ()), inherited)
	// The caller's slice is never modified.
	own := make([]string, 2, 4)
	own[0], own[1] = "GODEBUG=x=1", "A=1"
	_ = supervisorEnv(l.program, own)
	assert.Equal(t, []string{"GODEBUG=x=1", "A=1", ""}, own[:3])
}

// The binding must not link the supervisor: only the embedded package does.
func TestBindingDoesNotImportTheSupervisor(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	for _, forbidden := range []string{"supervisor", "reaper", "internal/cli"} {
		assert.NotContains(t, deps, "github.com/shellsup/shellsup/"+forbidden)
	}
}

// An empty or relative $PATH element names the current directory (or one
// below it): a shellsup planted there is never run, even with
// GODEBUG=execerrdot=0, which makes exec.LookPath accept such results.
func TestPathSkipsEmptyAndRelativeElements(t *testing.T) {
	for _, element := range []string{"", ".", "bin"} {
		t.Run(strconv.Quote(element), func(t *testing.T) {
			l := newLayout(t)
			t.Setenv("GODEBUG", "execerrdot=0")
			cwd := t.TempDir()
			require.NoError(t, os.Mkdir(filepath.Join(cwd, "bin"), 0o755))
			l.put(t, cwd)
			l.put(t, filepath.Join(cwd, "bin"))
			t.Chdir(cwd)
			t.Setenv("PATH", element+string(os.PathListSeparator)+l.pathDir)
			_, err := findBinary("")
			require.Error(t, err, "only the planted shellsup is reachable")
			assert.Contains(t, err.Error(), fmt.Sprintf("%q in $PATH (skipped: not an absolute directory)", element))
			onPath := l.put(t, l.pathDir)
			got, err := findBinary("")
			require.NoError(t, err)
			assert.Equal(t, onPath, got)
		})
	}
}
