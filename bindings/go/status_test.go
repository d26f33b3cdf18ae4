package shellsup

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResultStatus: Result.Status names how the run ended, one row per
// word (failed is in TestStragglersAreAnError).
func TestResultStatus(t *testing.T) {
	rows := []struct {
		name, command, word string
		timeout             time.Duration
		cancel              bool
	}{
		{"exit 0", "exit 0", StatusExited, 0, false},
		{"exit 2", "exit 2", StatusExited, 0, false},
		{"kill -9 $$", "kill -9 $$", StatusSignaled, 0, false},
		{"timeout", "echo ready; sleep 30", StatusTimeout, 300 * time.Millisecond, false},
		{"cancelled", "echo ready; sleep 30", StatusCancelled, 0, true},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			req := newRequest(t, row.command)
			req.Timeout = row.timeout
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if row.cancel {
				req.Progress = func(_, text string) error {
					if strings.Contains(text, "ready") {
						cancel()
					}
					return nil
				}
			}
			res, err := Run(ctx, req)
			require.NoError(t, err)
			assert.Equal(t, row.word, res.Status)
		})
	}
}

// TestResultStatusOOM: a hog killed at MaxMemory, as bash's last command,
// makes the run oom. The limit is read back inside the leaf first.
func TestResultStatusOOM(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a cgroup leaf with a memory limit")
	}
	check := `v2=/sys/fs/cgroup/unified$(sed -n 's/^0:://p' /proc/self/cgroup)/memory.max
v1=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)/memory.limit_in_bytes
if [ -r "$v2" ]; then m=$(cat "$v2"); else m=$(cat "$v1"); fi
[ "$m" = ` + strconv.Itoa(64<<20) + ` ] || { echo "limit is $m"; exit 99; }
/usr/bin/python3 -c "b = b'x' * (300 << 20)"`
	req := newRequest(t, check)
	req.MaxMemory = 64 << 20
	res, err := Run(context.Background(), req)
	var e *Error
	if errors.As(err, &e) && e.Category == CategoryContainmentUnavailable {
		t.Skipf("no memory control here: %s", e.Message)
	}
	require.NoError(t, err)
	require.NotEqual(t, 99, res.ExitCode, "the limit was not in force: %s", res.Stdout)
	require.GreaterOrEqual(t, res.Cleanup.OOMKills, int64(1), res.Stdout)
	assert.Equal(t, StatusOOM, res.Status)
}
