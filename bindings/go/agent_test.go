package shellsup

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/environ"
)

// Agent passes --agent; a Capture given as well is passed and wins.
func TestAgentBecomesFlag(t *testing.T) {
	assert.Equal(t, []string{"--frames", "--timeout=120", "--pidns-auto", "--agent", "--", "true"},
		argvOf(t, Request{Command: "true", Agent: true}))
	assert.Equal(t, []string{"--frames", "--timeout=120", "--pidns-auto", "--capture=head", "--agent", "--", "true"},
		argvOf(t, Request{Command: "true", Agent: true, Capture: "head"}))
}

// TestAgentRun: a real bash under Agent sees the agent settings and a
// UTF-8 locale of this host, no credential, in a login shell; the capture
// is head+tail unless Capture says otherwise.
func TestAgentRun(t *testing.T) {
	locale := environ.UTF8Locale("/")
	probe := `echo "$GCM_INTERACTIVE $PYTHONUNBUFFERED $GH_PAGER $LC_ALL $LANG askpass=[$GIT_ASKPASS$SSH_ASKPASS] color=[$COLORTERM] token=[$GITHUB_TOKEN]"
shopt -q login_shell && echo login; head -c 200000 /dev/zero | tr '\0' x; echo; echo last`
	for _, capture := range []string{"", "head"} {
		t.Run("capture "+capture, func(t *testing.T) {
			req := newRequest(t, probe)
			req.Env = append(req.Env, "GITHUB_TOKEN=ghp_x", "COLORTERM=truecolor", "GIT_ASKPASS=/bin/askpass")
			req.Agent, req.Capture = true, capture
			res, err := Run(context.Background(), req)
			require.NoError(t, err)
			first, _, _ := strings.Cut(res.Stdout, "\n")
			assert.Equal(t, "Never 1 cat "+locale+" "+locale+" askpass=[] color=[] token=[]", first)
			assert.Contains(t, res.Stdout, "\nlogin\n")
			assert.Empty(t, res.Stderr)
			assert.True(t, res.Truncated)
			assert.Equal(t, capture == "", strings.HasSuffix(res.Stdout, "last\n"), "head+tail keeps the end")
		})
	}
}
