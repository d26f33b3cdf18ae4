package shellsup

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pidsMaxScript prints the pids.max of the command's leaf: the v2 leaf's
// when it has one, else the v1 pids leaf's.
const pidsMaxScript = `v2=/sys/fs/cgroup/unified$(sed -n 's/^0:://p' /proc/self/cgroup)/pids.max
v1=/sys/fs/cgroup/pids$(sed -n 's/^[0-9]*:pids://p' /proc/self/cgroup)/pids.max
if [ -r "$v2" ]; then cat "$v2"; else cat "$v1"; fi`

func TestMaxProcsReachesTheLeaf(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a cgroup leaf")
	}
	req := newRequest(t, pidsMaxScript)
	req.MaxProcs = 32
	req.MaxMemory = 64 << 20
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "32", strings.TrimSpace(res.Stdout))
	assert.Zero(t, res.Cleanup.PidsLimitHit)
	assert.Zero(t, res.Cleanup.OOMKills)
}

func TestRaisedLimitReportedTampered(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a cgroup leaf")
	}
	raise := strings.Replace(pidsMaxScript, `cat "$v2"; else cat "$v1"`, `f=$v2; else f=$v1`, 1) + "\necho max > \"$f\"; cat \"$f\""
	req := newRequest(t, raise)
	req.MaxProcs = 20
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "max", strings.TrimSpace(res.Stdout), "the command (same uid) raised its own limit")
	assert.Equal(t, []string{"pids.max"}, res.Cleanup.Tampered, "and the report says so")
}

func TestLimitsValidated(t *testing.T) {
	for _, req := range []Request{{Command: "true", MaxProcs: -1}, {Command: "true", MaxProcs: 1}, {Command: "true", MaxProcs: 5 << 20}, {Command: "true", MaxMemory: 1024}} {
		_, err := Run(context.Background(), req)
		e := requireCategory(t, err, CategoryValidation)
		assert.Contains(t, e.Message, "max-")
	}
}
