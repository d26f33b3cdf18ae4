package shellsup

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/request"
)

// deadlineFlags are the --timeout and --lifetime options of args.
func deadlineFlags(args []string) []string {
	var out []string
	for _, a := range args {
		if strings.HasPrefix(a, "--timeout") || strings.HasPrefix(a, "--lifetime") {
			out = append(out, a)
		}
	}
	return out
}

// TestOneDeadlineOption: a call's command line carries exactly one
// --timeout, a job's exactly one --lifetime, and the config holds the one
// deadline with its kind.
func TestOneDeadlineOption(t *testing.T) {
	c, err := Request{Command: "true"}.validate()
	require.NoError(t, err)
	assert.Equal(t, request.Deadline{Kind: request.KindTimeout, Seconds: 120}, c.deadline)
	assert.Equal(t, []string{"--timeout=120"}, deadlineFlags(c.args()))

	c, err = Request{Command: "true", Timeout: 1500 * time.Millisecond}.validate()
	require.NoError(t, err)
	assert.Equal(t, []string{"--timeout=1.5"}, deadlineFlags(c.args()))

	c, err = Request{Command: "true", Lifetime: 2 * time.Hour}.validate()
	require.NoError(t, err)
	assert.Equal(t, request.Deadline{Kind: request.KindLifetime, Seconds: 7200}, c.deadline)
	assert.Equal(t, []string{"--lifetime=7200"}, deadlineFlags(c.args()), "a lifetime past the timeout's 600 s limit, and no --timeout")

	_, err = Request{Command: "true", Lifetime: time.Hour, Timeout: time.Second}.validate()
	assert.ErrorContains(t, err, "exclude each other")
	_, err = Request{Command: "true", Timeout: time.Hour}.validate()
	assert.ErrorContains(t, err, "timeout must be")
}
