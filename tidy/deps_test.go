package tidy

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNoPackageOfTheModule keeps tidy a text transform alone: it
// depends on no other package of shellsup (its tests use the decoder).
func TestImportsNoPackageOfTheModule(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/shellsup/shellsup/") && pkg != "github.com/shellsup/shellsup/tidy" {
			t.Errorf("tidy depends on %s", pkg)
		}
	}
}
