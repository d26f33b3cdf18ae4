package shellsup

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/request"
)

// TestSlackEqualsLimitsFile compares the binding's slack with
// testdata/limits.json, which the Python binding's tests compare with its
// own: both bindings wait the same.
func TestSlackEqualsLimitsFile(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/limits.json")
	require.NoError(t, err)
	var f struct {
		Slack struct {
			WatchdogMarginSeconds float64 `json:"watchdogMarginSeconds"`
			ExitWaitSeconds       float64 `json:"exitWaitSeconds"`
			StderrKeptBytes       int     `json:"stderrKeptBytes"`
		} `json:"bindingSlack"`
	}
	require.NoError(t, json.Unmarshal(raw, &f))
	assert.Equal(t, time.Duration(f.Slack.WatchdogMarginSeconds*float64(time.Second)), watchdogSlack, "watchdog margin")
	assert.Equal(t, time.Duration(f.Slack.ExitWaitSeconds*float64(time.Second)), exitWait, "exit wait")
	assert.Equal(t, f.Slack.StderrKeptBytes, stderrKeep, "stderr kept")
}

// TestWatchdogOutwaitsTheCleanup: the watchdog arms at the deadline plus
// the grace plus its margin; shellsup delivers totals within the deadline
// plus the grace plus the cleanup's bounds (request.CleanupBound, the same
// numbers as limits.json's "cleanup"). The margin must exceed those bounds,
// with room to spare for a loaded machine, or a slow but working cleanup
// would be killed as a shellsup that stopped reporting.
func TestWatchdogOutwaitsTheCleanup(t *testing.T) {
	assert.Greater(t, watchdogSlack, request.CleanupBound, "watchdog margin %v, cleanup bounds %v", watchdogSlack, request.CleanupBound)
	assert.GreaterOrEqual(t, watchdogSlack, 2*request.CleanupBound, "less than 2× room for a loaded machine")
}
