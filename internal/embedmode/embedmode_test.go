package embedmode

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestRegisterAndReset(t *testing.T) {
	t.Cleanup(Reset)
	if _, ok, _ := Registered(); ok {
		t.Fatal("registered before Register")
	}
	Register("/usr/local/bin/harness", nil)
	if exe, ok, err := Registered(); !ok || exe != "/usr/local/bin/harness" || err != nil {
		t.Fatalf("Registered() = %q, %v, %v", exe, ok, err)
	}
	failed := errors.New("no /proc")
	Register("", failed)
	if _, ok, err := Registered(); !ok || err != failed {
		t.Fatalf("Registered() = _, %v, %v; want the error", ok, err)
	}
	Reset()
	if _, ok, _ := Registered(); ok {
		t.Fatal("registered after Reset")
	}
}

// Godebug is exactly the binary's //go:debug directives.
func TestGodebugIsTheBinarys(t *testing.T) {
	src, err := os.ReadFile("../../cmd/shellsup/godebug.go")
	if err != nil {
		t.Fatal(err)
	}
	var settings []string
	for _, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(line, "//go:debug "); ok {
			settings = append(settings, strings.TrimSpace(rest))
		}
	}
	if got := strings.Join(settings, ","); got != Godebug {
		t.Fatalf("cmd/shellsup/godebug.go sets %q; Godebug is %q", got, Godebug)
	}
}
