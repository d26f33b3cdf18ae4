package shellsup

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDoesNotDependOnDecoder: the binding needs the wire format (protocol)
// and the request limits (request), not the capture's decoder.
func TestDoesNotDependOnDecoder(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if slices.Contains(deps, "github.com/shellsup/shellsup/decoder") {
		t.Errorf("bindings/go depends on decoder:\n%s", out)
	}
}
