package shellsup

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDoesNotDependOnTheSupervisor: the binding needs the wire format
// (protocol), the request limits (request) and the capture's UTF-8 rule
// (decoder, one decoder for shellsup and the binding), never the run
// itself: a program that imports the binding must not link the supervisor
// or the reaper.
func TestDoesNotDependOnTheSupervisor(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, pkg := range []string{"supervisor", "reaper"} {
		if slices.Contains(deps, "github.com/shellsup/shellsup/"+pkg) {
			t.Errorf("bindings/go depends on %s:\n%s", pkg, out)
		}
	}
	if !slices.Contains(deps, "github.com/shellsup/shellsup/decoder") {
		t.Errorf("bindings/go has a UTF-8 decoder of its own again (it imports decoder):\n%s", out)
	}
}
