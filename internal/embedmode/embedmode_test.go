package embedmode

import (
	"errors"
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
