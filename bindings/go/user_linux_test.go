//go:build linux

package shellsup

import (
	"context"
	"os"
	"os/user"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUserValidated(t *testing.T) {
	for spec, msg := range map[string]string{
		"a:b:c":   `user must be USER or USER:GROUP, each a name or a numeric id (e.g. nobody, 65534, nobody:nogroup) (got "a:b:c")`,
		"nobody:": `(got "nobody:")`,
		"no body": `without whitespace, control characters or NUL bytes (got "no body")`,
	} {
		req := Request{Command: "true", User: spec, Binary: "/nonexistent/shellsup"} // refused before any binary is looked for
		_, err := Run(context.Background(), req)
		e := requireCategory(t, err, CategoryValidation)
		assert.Contains(t, e.Message, msg)
		_, err = Start(context.Background(), req)
		requireCategory(t, err, CategoryValidation)
	}
}

func TestUserUnknownRefusedByShellsup(t *testing.T) {
	req := newRequest(t, "echo ran")
	req.User = "no-such-user-xyz"
	res, err := Run(context.Background(), req)
	e := requireCategory(t, err, CategoryValidation)
	assert.Contains(t, e.Message, `user "no-such-user-xyz": no user "no-such-user-xyz" in /etc/passwd`)
	assert.Zero(t, res)
}

// TestUserRuns: Request.User runs the command as nobody, for Run and Start.
func TestUserRuns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("--user needs shellsup to run as root")
	}
	pw, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("this host has no user nobody")
	}
	cmd := `setsid sleep 300 </dev/null >/dev/null 2>&1 & id -u; echo "$USER"; grep '^CapEff:' /proc/self/status; kill -0 $PPID 2>/dev/null && echo "signalled shellsup"`
	req := newRequest(t, cmd)
	req.User, req.Cwd = "nobody", "/"
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, pw.Uid+"\nnobody\nCapEff:\t0000000000000000\n", res.Stdout)

	req = newRequest(t, cmd)
	req.User, req.Cwd = "nobody", "/"
	job, err := Start(context.Background(), req)
	require.NoError(t, err)
	defer job.Close()
	res, err = job.Wait(context.Background())
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(res.Stdout, pw.Uid+"\nnobody\n"), res.Stdout)
}

// TestUserRefusedWithoutPrivilege: a shellsup that may not change its
// user refuses with containment_unavailable.
func TestUserRefusedWithoutPrivilege(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may take any user; the refusal is tested as nobody in cmd/shellsup (TestUserRefusedUnprivileged)")
	}
	req := newRequest(t, "echo ran")
	req.User = "root"
	_, err := Run(context.Background(), req)
	e := requireCategory(t, err, CategoryContainmentUnavailable)
	assert.Contains(t, e.Message, "CAP_SETUID")
}
