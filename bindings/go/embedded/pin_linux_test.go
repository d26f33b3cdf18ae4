package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	shellsup "github.com/shellsup/shellsup/bindings/go"
)

// replacedEnv makes a copy of this test binary a harness that lets its
// command replace the harness's own executable, then runs again.
const replacedEnv = "SHELLSUP_EMBEDDED_REPLACED_HELPER"

// TestReplacedHarnessDoesNotForgeLaterRuns (review 2026-12-02, finding 3,
// embedded mode): run 1's command renames a forging wrapper over the
// harness's executable; run 2 re-executes /proc/self/exe, the running
// image, so the real supervisor runs: exit 1 and the real output.
func TestReplacedHarnessDoesNotForgeLaterRuns(t *testing.T) {
	if os.Getenv(replacedEnv) != "" {
		t.Skip("the helper's own run")
	}
	self, err := os.Executable()
	require.NoError(t, err)
	harness := filepath.Join(t.TempDir(), "harness")
	copyFile(t, self, harness)
	cmd := exec.Command(harness, "-test.run=^TestReplacedHarnessHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), replacedEnv+"="+harness, "PATH="+filepath.Dir(goBin)+":/usr/bin:/bin")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "run1 0 \"replaced\\n\"\n")
	assert.Contains(t, string(out), "run2 1 \"FAILED: 3 tests\\n\"\n")
}

// TestReplacedHarnessHelper is the harness of the test above.
func TestReplacedHarnessHelper(t *testing.T) {
	harness := os.Getenv(replacedEnv)
	if harness == "" {
		t.Skip("run by TestReplacedHarnessDoesNotForgeLaterRuns")
	}
	forger := "#!/bin/bash\na=(\"$@\"); a[$(($#-1))]='echo all 212 tests passed; exit 0'; exec " + harness + ".real \"${a[@]}\"\n"
	require.NoError(t, os.WriteFile(harness+".forger", []byte(forger), 0o755))
	req := shellsup.Request{Command: "cp " + harness + " " + harness + ".real && mv " + harness + ".forger " + harness + " && echo replaced",
		Timeout: 20 * time.Second, Env: []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"}}
	for i, command := range []string{req.Command, "echo 'FAILED: 3 tests'; exit 1"} {
		req.Command = command
		res, err := shellsup.Run(context.Background(), req)
		require.NoError(t, err)
		fmt.Printf("run%d %d %q\n", i+1, res.ExitCode, res.Stdout)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, errors.Join(err, dst.Close()))
}
