//go:build linux

package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/environ"
)

// agentProbe prints, one per line, NAME=value or NAME unset, for each
// name, as the command's bash sees them.
func agentProbe(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteString(`if [ "${` + n + `+set}" = set ]; then echo "` + n + `=$` + n + `"; else echo "` + n + ` unset"; fi; `)
	}
	return b.String() + "shopt -q login_shell && echo login"
}

// TestAgentEnvironment: under --agent a real bash (a login shell) sees
// every agent setting, over what the harness had, a UTF-8 locale of this
// host that bash takes without a warning, and no credential; the capture
// is head+tail. Each part is overridable.
func TestAgentEnvironment(t *testing.T) {
	harness := []string{"GIT_ASKPASS=/usr/bin/ksshaskpass", "SSH_ASKPASS=/usr/bin/ssh-askpass", "GCM_INTERACTIVE=Always",
		"PYTHONUNBUFFERED=", "LC_ALL=POSIX", "LANG=POSIX", "COLORTERM=truecolor", "GH_PAGER=less", "PAGER=more", "NO_COLOR=",
		"GITHUB_TOKEN=ghp_secret"}
	var names []string
	for _, kv := range harness {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
	}
	locale := environ.UTF8Locale("/")
	agent := []string{"GIT_ASKPASS=", "SSH_ASKPASS=", "GCM_INTERACTIVE=Never", "PYTHONUNBUFFERED=1", "LC_ALL=" + locale, "LANG=" + locale,
		"COLORTERM=", "GH_PAGER=cat", "PAGER=cat", "NO_COLOR=1"}
	// Without the agent settings, the harness's values less what
	// scrubbing drops: GH_* (GH_PAGER among them) and the token.
	var scrubbed []string
	for _, kv := range harness {
		if name, _, _ := strings.Cut(kv, "="); environ.Secret(name) {
			scrubbed = append(scrubbed, name+" unset")
		} else {
			scrubbed = append(scrubbed, kv)
		}
	}
	rows := []struct {
		name    string
		args    []string
		want    []string // the probe's lines
		capture string
	}{
		{"--agent", []string{"--agent"}, append(agent, "GITHUB_TOKEN unset"), "head+tail"},
		{"--agent --capture head", []string{"--agent", "--capture", "head"}, append(agent, "GITHUB_TOKEN unset"), "head"},
		{"--agent --scrub-env=false", []string{"--agent", "--scrub-env=false"}, append(agent, "GITHUB_TOKEN=ghp_secret"), "head+tail"},
		{"--agent --agent-env=false", []string{"--agent", "--agent-env=false"}, scrubbed, "head+tail"},
		{"--agent-env alone", []string{"--agent-env"}, append(agent, "GITHUB_TOKEN=ghp_secret"), "head"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			r := runShellsup(t, opts{args: row.args, env: harness, command: agentProbe(names...)})
			tot := requireTotals(t, r)
			assert.Equal(t, strings.Join(append(row.want, "login"), "\n")+"\n", tot.Stdout, "a login shell, with these values")
			assert.Empty(t, tot.Stderr, "bash takes the locale without a warning")
			require.NotNil(t, r.start)
			assert.True(t, r.start.Login)
			assert.Equal(t, row.capture, r.start.Capture)
			assert.Equal(t, row.capture, tot.Capture)
		})
	}
}
