//go:build linux

package embedded_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/reaper/reapertest"
)

// readmeExample is the harness program the bindings/go README shows, verbatim.
func readmeExample(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(readme), "<!-- embedded-example -->\n```go\n")
	require.True(t, ok, "the README has no embedded-example block")
	code, _, ok := strings.Cut(after, "\n```\n")
	require.True(t, ok, "the embedded-example block is not closed")
	return code + "\n"
}

// The README's harness, built in a module outside this one (a replace
// directive points at this repository; the module cache supplies the rest,
// offline), runs a command with no shellsup anywhere on PATH.
func TestTheReadmeHarnessBuildsInAnotherModule(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	mod := t.TempDir()
	gomod := "module example.com/harness\n\ngo 1.26\n\n" +
		"require github.com/shellsup/shellsup v0.0.0-00010101000000-000000000000\n\n" +
		"replace github.com/shellsup/shellsup => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "main.go"), []byte(readmeExample(t)), 0o644))

	harness := filepath.Join(t.TempDir(), "harness") // a directory with no shellsup in it
	build := exec.Command(goBin, "build", "-o", harness, ".")
	build.Dir = mod
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off", "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building the README harness:\n%s", out)

	tok := reapertest.NewToken()
	run := exec.Command(harness)
	run.Dir = t.TempDir()
	run.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + os.Getenv("HOME"), tok.Env()}
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	require.NoError(t, run.Run(), "stderr: %s", stderr.String())
	reapertest.Check(t, tok)
	assert.Equal(t, "[stdout] hello\nexit 3, 1 process(es) cleaned up\n", stdout.String())
	assert.Empty(t, stderr.String())
}

// block is the fenced block of the README at path that follows marker.
func block(t *testing.T, path, marker, fence string) string {
	t.Helper()
	readme, err := os.ReadFile(path)
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(readme), marker+"\n```"+fence+"\n")
	require.True(t, ok, "%s has no %s block", path, marker)
	code, _, ok := strings.Cut(after, "\n```\n")
	require.True(t, ok, "the %s block of %s is not closed", marker, path)
	return code + "\n"
}

// The bindings/go README's recipe for a module of one's own, run as written
// (all but the clone: $HOME/src/shellsup is this checkout) offline, on the
// top-level README's Go example; the harness then finds the shellsup built
// beside it, with none on PATH, and nothing it started survives.
func TestTheModuleRecipeBuildsAndRuns(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	recipe := block(t, filepath.Join("..", "README.md"), "<!-- module-recipe -->", "sh")
	clone, script, ok := strings.Cut(recipe, "\n")
	require.True(t, ok && strings.HasPrefix(clone, "git clone "), "the recipe begins with the clone: %q", clone)

	home, work := t.TempDir(), t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(home, "src"), 0o755))
	require.NoError(t, os.Symlink(root, filepath.Join(home, "src", "shellsup")))
	require.NoError(t, os.Mkdir(filepath.Join(work, "harness"), 0o755))
	mainGo := block(t, filepath.Join("..", "..", "..", "README.md"), "<!-- go-example -->", "go")
	require.NoError(t, os.WriteFile(filepath.Join(work, "harness", "main.go"), []byte(mainGo), 0o644))

	sh := exec.Command("/bin/bash", "-euc", script)
	sh.Dir = work
	sh.Env = append(os.Environ(), "HOME="+home, "PATH="+filepath.Dir(goBin)+":/usr/bin:/bin",
		"GOPROXY=off", "GOWORK=off", "CGO_ENABLED=0", "GOTELEMETRY=off")
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "the recipe:\n%s", out)
	reapertest.ReapOrphans() // the go command's own detached children, if any came here
	gomod, err := os.ReadFile(filepath.Join(work, "harness", "go.mod"))
	require.NoError(t, err)
	assert.NotContains(t, string(gomod), "testify", "the binding's module graph pulls in a test dependency")

	tok := reapertest.NewToken()
	run := exec.Command(filepath.Join(work, "harness", "bin", "harness"))
	run.Dir = t.TempDir()
	run.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + os.Getenv("HOME"), tok.Env()}
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	require.NoError(t, run.Run(), "stderr: %s", stderr.String())
	reapertest.Check(t, tok)
	assert.Equal(t, "exit 2, stdout \"hello\\n\", 1 process(es) cleaned up, 0 left\n", stdout.String())
	assert.Empty(t, stderr.String())
}
