package proctest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHelperCommandRunsTheHelper(t *testing.T) {
	out, err := helpers.Command("echo", "a", "b c").Output()
	if err != nil {
		t.Fatalf("running the echo helper: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != "[a b c]" {
		t.Fatalf("echo helper printed %q, want %q", got, "[a b c]")
	}
}

func TestHelperShellRunsTheHelper(t *testing.T) {
	err := exec.Command("/bin/sh", "-c", helpers.Shell("exit-7")).Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("exit-7 helper through sh: %v, want exit status 7", err)
	}
}

func TestPoll(t *testing.T) {
	n := 0
	Poll(t, 10*time.Second, "three tries", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("tried %d times, want 3", n)
	}
	if Await(10*time.Millisecond, func() bool { return false }) {
		t.Fatal("Await reported a condition that never held")
	}
}

func TestChildrenAndPPid(t *testing.T) {
	cmd := exec.Command("sleep", "60") // self-destructs after 60 s if the kill is missed
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	Poll(t, 10*time.Second, "sleep to be a child in S state", func() bool {
		for _, pid := range Children(os.Getpid(), 'S') {
			if pid == cmd.Process.Pid {
				return true
			}
		}
		return false
	})
	if got := PPid(cmd.Process.Pid); got != os.Getpid() {
		t.Fatalf("PPid(%d) = %d, want %d", cmd.Process.Pid, got, os.Getpid())
	}
}

// TestUnusedHelperFailsTheSuite is the registry's negative control: the
// test binary built with -tags proctestunused registers a helper that no
// test starts, and its full run must fail saying so, although every test
// in it passes.
func TestUnusedHelperFailsTheSuite(t *testing.T) {
	if negativeControl {
		t.Skip("this is the negative control's own run")
	}
	bin := filepath.Join(t.TempDir(), "proctest-unused.test")
	build := exec.Command("go", "test", "-c", "-tags", "proctestunused", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the negative control: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput() // a full run: no -test.run
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("the suite with an unused helper ended with %v, want exit status 1\n%s", err, out)
	}
	if !strings.Contains(string(out), `proctest: helper "never-used" was registered but never used`) {
		t.Fatalf("the failure does not name the unused helper:\n%s", out)
	}
	if strings.Contains(string(out), "FAIL: Test") {
		t.Fatalf("a test failed; only the registry check should:\n%s", out)
	}
}
