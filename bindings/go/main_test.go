package shellsup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/shellsup/shellsup/reaper/reapertest"
)

// helperVar makes the test binary act as a named helper program instead of
// running the tests (os/exec's pattern): see helpers_test.go.
const helperVar = "SHELLSUP_GOBINDING_HELPER"

// TestMain builds the real shellsup binary once, points $SHELLSUP_BIN at
// it, gives every run a clean $HOME (a login shell sources ~/.profile,
// which is slow and may print), and makes the test binary a child
// subreaper so that orphans of a dead shellsup land on it, where the leak
// check sees them.
func TestMain(m *testing.M) {
	if name := os.Getenv(helperVar); name != "" {
		os.Exit(runHelper(name))
	}
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "shellsup-gobinding-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "creating the test directory:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "shellsup")
	build := exec.Command("go", "build", "-o", bin, "./cmd/shellsup")
	build.Dir = filepath.Join("..", "..") // the module root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building shellsup: %v\n%s", err, out)
		return 1
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "creating a clean HOME:", err)
		return 1
	}
	os.Setenv(BinaryEnv, bin)
	os.Setenv("HOME", home)
	if err := reapertest.BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "becoming a child subreaper:", err)
		return 1
	}
	return m.Run()
}
