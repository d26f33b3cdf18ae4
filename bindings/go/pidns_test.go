//go:build linux

package shellsup

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
)

// TestRunPIDNamespace: Request.PIDNamespace runs the command under the init
// of its own PID namespace, and the outcome is reported as without it.
func TestRunPIDNamespace(t *testing.T) {
	req := newRequest(t, "sleep 300 & cat /proc/1/comm; echo ppid $PPID; exit 9")
	req.PIDNamespace = true
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "shellsup-init\nppid 1\n", res.Stdout)
	assert.Equal(t, 9, res.ExitCode)
	assert.Equal(t, proctest.Containment(true), res.Cleanup.Tier)
	assert.True(t, res.Cleanup.Clean(), "stragglers: %v", res.Cleanup.Stragglers)
}
