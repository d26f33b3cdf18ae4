package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sliceCases is how many cases the make test slice compares; make fuzz-python runs 10^6.
const sliceCases = 20000

// repoRoot is where the Makefile lives, three levels up.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	return root
}

// python is the interpreter .ci/find-python names (the one make test-python uses).
func python(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(repoRoot(t), ".ci", "find-python")).Output()
	require.NoError(t, err, "no Python for the differential check: .ci/find-python failed")
	return strings.TrimSpace(string(out))
}

// buildDriver builds this driver, with the given build tags, into a temporary directory.
func buildDriver(t *testing.T, tags string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pydiff")
	cmd := exec.Command("go", "build", "-tags", tags, "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "building the driver: %s", out)
	return bin
}

// runSlice runs testdata/fuzz_python.py for sliceCases cases against driver and returns its exit
// status and output.
func runSlice(t *testing.T, driver string) (int, string) {
	t.Helper()
	seed := strconv.FormatInt(time.Now().UnixNano()%(1<<40), 10)
	cmd := exec.Command(python(t), filepath.Join(repoRoot(t), "testdata", "fuzz_python.py"),
		"--driver", driver, "--count", strconv.Itoa(sliceCases), "--seed", seed)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("running fuzz_python.py: %v", err)
		}
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// TestEqualToPython: the real capture path agrees with Python's decoder and the budget rule on
// every case of the slice.
func TestEqualToPython(t *testing.T) {
	rc, out := runSlice(t, buildDriver(t, ""))
	t.Log(lastLine(out))
	require.Equal(t, 0, rc, "the capture differs from Python:\n%s", out)
	require.Contains(t, out, strconv.Itoa(sliceCases)+" cases compared")
}

// TestPlantedBugCaught: a driver that drops the U+FFFD of a sequence left incomplete at EOF on
// stdout is caught within the same slice.
func TestPlantedBugCaught(t *testing.T) {
	rc, out := runSlice(t, buildDriver(t, "plantbug"))
	t.Log(lastLine(out))
	require.Equal(t, 1, rc, "the planted bug was not caught:\n%s", out)
	require.Contains(t, out, "DIFFERENCE")
	require.Contains(t, out, "replay:")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
