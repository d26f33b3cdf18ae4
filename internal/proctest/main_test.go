package proctest

import (
	"fmt"
	"os"
	"testing"
)

// helperVar selects a helper of this package's own tests.
const helperVar = "PROCTEST_SELF_HELPER"

var helpers = NewHelpers(helperVar)

func init() {
	helpers.Register("echo", func(args []string) int {
		fmt.Println(args)
		return 0
	})
	helpers.Register("exit-7", func([]string) int { return 7 })
}

var shellsupBin, home string

func TestMain(m *testing.M) {
	Main(m, Config{
		Helpers: helpers,
		Builds:  []Build{{Pkg: "./cmd/shellsup", Out: &shellsupBin}},
		Home:    &home,
	})
}

func TestMainPrepared(t *testing.T) {
	st, err := os.Stat(shellsupBin)
	if err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("the built binary %q: %v", shellsupBin, err)
	}
	entries, err := os.ReadDir(home)
	if err != nil || len(entries) != 0 {
		t.Fatalf("HOME %q is not an empty directory: %v %v", home, entries, err)
	}
}
