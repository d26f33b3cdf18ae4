//go:build linux

package reaper

import (
	"fmt"
	"os"
	"testing"

	"github.com/shellsup/shellsup/reaper/reapertest"
)

// The tests run the package for real: the test binary becomes a child
// subreaper, so the trees they build reparent to it, exactly as they do to
// shellsup.
func TestMain(m *testing.M) {
	if err := reapertest.BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "becoming a subreaper:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
