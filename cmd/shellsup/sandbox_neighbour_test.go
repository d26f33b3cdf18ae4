//go:build linux

package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSandboxStopsNeighbourAttack is the review's finding 7 (2026-12-02)
// under --sandbox: runs of one uid reach each other's processes (a job A
// reads run B's bash's environment, writes into its stdout through
// /proc/<bash>/fd/1 and ptraces it into _exit(0)). Landlock's ptrace
// restriction refuses a sandboxed process every ptrace-access check on a
// process outside its domain, so an A run with --sandbox read-only can do
// none of it, and B ends as its command says. Without --sandbox (the
// control) the same A reads B's environment and injects its output.
func TestSandboxStopsNeighbourAttack(t *testing.T) {
	bin, dir := unprivileged(t)
	attack := `v=; for p in $(pgrep -u nobody -f "NEIGHBOUR[V]ICTIM-%[1]s"); do [ "$(cat /proc/$p/comm)" = bash ] && v=$p; done
[ -n "$v" ] || { echo no-victim; exit 0; }
cat /proc/$v/environ >/dev/null 2>&1 && echo environ-read || echo environ-refused
{ echo injected > /proc/$v/fd/1; } 2>/dev/null && echo wrote-fd1 || echo fd1-refused
if command -v gdb >/dev/null; then timeout 10 gdb -p $v -batch -ex "call (void)_exit(0)" >/dev/null 2>&1; fi; true`
	for _, sandbox := range []string{"none", "read-only"} {
		t.Run(sandbox, func(t *testing.T) {
			tag := fmt.Sprintf("%d", time.Now().UnixNano())
			script := fmt.Sprintf(`sp="setpriv --reuid=nobody --regid=nogroup --clear-groups"
$sp %[1]s --quiet --no-cgroup -- 'echo NEIGHBOURVICTIM-%[2]s >/dev/null; sleep 2; echo B done' > b.out 2>&1 & b=$!
i=0; until pgrep -u nobody -f "NEIGHBOUR[V]ICTIM-%[2]s" >/dev/null; do i=$((i+1)); [ $i -lt 1000 ] || exit 98; sleep 0.01; done
$sp %[1]s --quiet --no-cgroup --sandbox %[3]s -- '%[4]s'; echo "A exit $?"
wait $b; echo "B exit $?"; cat b.out`, bin, tag, sandbox, strings.ReplaceAll(fmt.Sprintf(attack, tag), "'", `'\''`))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
			cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			got := string(out)
			if strings.Contains(got, "A exit 125") {
				t.Skipf("--sandbox is not available here: %s", got)
			}
			require.Contains(t, got, "A exit 0", got)
			if sandbox == "none" {
				assert.Contains(t, got, "environ-read\nwrote-fd1\n", "the control: runs of one uid reach each other")
				return
			}
			assert.Contains(t, got, "environ-refused\nfd1-refused\n", "a sandboxed A cannot reach B's bash")
			assert.Contains(t, got, "B exit 0\nB done\n", "B ends as its command says, nothing injected")
		})
	}
}
