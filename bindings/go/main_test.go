package shellsup

import (
	"os"
	"testing"

	"github.com/shellsup/shellsup/internal/proctest"
)

// helpers are the helper programs the test binary plays (os/exec's
// pattern): see helpers_test.go.
var helpers = proctest.NewHelpers("SHELLSUP_GOBINDING_HELPER")

// seamsBin is shellsup built with its test seams (supervisor/seams_testseams.go).
var seamsBin string

// TestMain builds the real shellsup binary once, points $SHELLSUP_BIN at
// it, gives every run a clean $HOME (a login shell sources ~/.profile,
// which is slow and may print), and makes the test binary a child
// subreaper so that orphans of a dead shellsup land on it, where the leak
// check sees them.
func TestMain(m *testing.M) {
	var bin, home string
	proctest.Main(m, proctest.Config{
		Helpers: helpers,
		Builds: []proctest.Build{
			{Pkg: "./cmd/shellsup", Out: &bin},
			{Pkg: "./cmd/shellsup", Tags: "testseams", Out: &seamsBin},
		},
		Home: &home,
		Setup: func() error {
			if err := os.Setenv(BinaryEnv, bin); err != nil {
				return err
			}
			return os.Setenv("HOME", home)
		},
	})
}
