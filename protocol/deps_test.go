package protocol

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNoPackageOfTheModule keeps protocol the wire format alone: it
// depends on no other package of shellsup.
func TestImportsNoPackageOfTheModule(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/shellsup/shellsup/") && pkg != "github.com/shellsup/shellsup/protocol" {
			t.Errorf("protocol depends on %s", pkg)
		}
	}
}
