package environ

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestScrubDropsCredentialNames(t *testing.T) {
	env := []string{"PATH=/bin", "GITHUB_TOKEN=ghp_x", "AWS_ACCESS_KEY_ID=AKIA", "MY_API_KEY=k",
		"DB_PASSWORD=p", "npm_token=t", "HOME=/h", "KEYBOARD=us", "TOKENIZER=bpe", "SSH_AUTH_SOCK=/s"}
	out, dropped := Build(env, Options{Scrub: true})
	assert.Equal(t, []string{"PATH=/bin", "HOME=/h", "KEYBOARD=us", "TOKENIZER=bpe"}, out)
	assert.Equal(t, []string{"AWS_ACCESS_KEY_ID", "DB_PASSWORD", "GITHUB_TOKEN", "MY_API_KEY", "SSH_AUTH_SOCK", "npm_token"}, dropped)
}

func TestNoScrubKeepsEverything(t *testing.T) {
	out, dropped := Build([]string{"GITHUB_TOKEN=x", "HOME=/h"}, Options{})
	assert.Equal(t, []string{"GITHUB_TOKEN=x", "HOME=/h"}, out)
	assert.Empty(t, dropped)
}

func TestHomeIsNeverLeftUnset(t *testing.T) {
	out, _ := Build([]string{"PATH=/bin"}, Options{})
	assert.Equal(t, []string{"PATH=/bin", "HOME=" + NoHome}, out)
}

func TestAgentDefaultsOverrideAndLaterEntriesWin(t *testing.T) {
	out, _ := Build([]string{"PAGER=less", "X=1", "X=2", "HOME=/h"}, Options{Agent: true})
	assert.Contains(t, out, "PAGER=cat")
	assert.NotContains(t, out, "PAGER=less")
	assert.Contains(t, out, "X=2")
	assert.NotContains(t, out, "X=1")
	assert.Contains(t, out, "NO_COLOR=1")
	assert.Contains(t, out, "TERM=dumb")
}

// Hostile and ordinary names, each with what Scrub must decide.
func TestSecretTable(t *testing.T) {
	rows := []struct {
		name   string
		secret bool
	}{
		{"npm_config_//registry.npmjs.org/:_authToken", true},
		{"NPM_CONFIG_//npm.pkg.github.com/:_AUTHTOKEN", true},
		{"npm_config_//registry.example/:_auth", true},
		{"npm_config_//registry.example/:_password", true},
		{"npm_config__auth", true},
		{"MYSQL_PWD", true},
		{"GPG_PASSPHRASE", true},
		{"CI_JOB_JWT", true},
		{"CI_JOB_JWT_V2", true},
		{"VAULT_ID_JWT", true},
		{"SLACK_WEBHOOK_URL", true},
		{"DISCORD_WEBHOOK_URL", true},
		{"SECRET_KEY_BASE", true},
		{"SENDGRID_APIKEY", true},
		{"OP_SESSION_my", true},
		{"OP_SESSION_team/x", true},
		{"a/b/GITHUB_TOKEN", true},
		{"x/y_TOKEN", true},
		{"GITHUB_TOKEN", true},
		{"PATH", false},
		{"PWD", false},
		{"OLDPWD", false},
		{"KEYBOARD", false},
		{"TOKENIZER", false},
		{"WEBHOOK_URLS_DOC", false},
		{"JWT_LIB_VERSION", false},
		{"", false},
		{"/", false},
		{"npm_config_registry", false},
	}
	for _, r := range rows {
		assert.Equal(t, r.secret, Secret(r.name), "Secret(%q)", r.name)
	}
}

func TestMatch(t *testing.T) {
	rows := []struct {
		pattern, name string
		ok            bool
	}{
		{"*", "", true},
		{"*", "a/b:c", true},
		{"A*B", "A/x/B", true},
		{"A*B", "A/x/BC", false},
		{"*_TOKEN", "_TOKEN", true},
		{"*_TOKEN", "X_TOKENX", false},
		{"*_SECRET_*", "A_SECRET_", true},
		{"**", "abc", true},
		{"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXcYb", false},
		{"[a]", "a", false}, // no classes: `[` is itself
		{"[a]", "[a]", true},
		{"a?c", "abc", false}, // no `?`
		{"", "", true},
		{"", "x", false},
		{"x", "", false},
	}
	for _, r := range rows {
		assert.Equal(t, r.ok, Match(r.pattern, r.name), "Match(%q, %q)", r.pattern, r.name)
	}
}

// A long hostile name is matched in bounded time (no exponential
// backtracking on many stars).
func TestMatchLongName(t *testing.T) {
	name := strings.Repeat("A_", 5000) + "X"
	assert.False(t, Match("*A*A*A*A*A*A*A*A*Y", name))
	assert.True(t, Secret(strings.Repeat("/", 10000)+"_TOKEN"))
}

func TestAllowListKeepsOnlyNamedAndBase(t *testing.T) {
	env := []string{"PATH=/bin", "HOME=/h", "LANG=C", "LC_ALL=C", "LCX=1", "TERM=xterm", "TZ=UTC", "USER=u",
		"LOGNAME=u", "SHELL=/bin/bash", "TMPDIR=/t", "FOO=1", "FOOBAR=2", "BAR=3", "GITHUB_TOKEN=g", "path=lower", "MY_1=a", "MY_2=b"}
	out, dropped := Build(env, Options{Allow: []string{"FOO", "MY_*"}})
	assert.Equal(t, []string{"PATH=/bin", "HOME=/h", "LANG=C", "LC_ALL=C", "TERM=xterm", "TZ=UTC", "USER=u",
		"LOGNAME=u", "SHELL=/bin/bash", "TMPDIR=/t", "FOO=1", "MY_1=a", "MY_2=b"}, out)
	assert.Empty(t, dropped, "the allow-list is not scrubbing: nothing is reported dropped")
}

func TestAllowListWithoutHomeStillSetsHome(t *testing.T) {
	out, _ := Build([]string{"X=1"}, Options{Allow: []string{"Y"}})
	assert.Equal(t, []string{"HOME=" + NoHome}, out)
}

// With --scrub-env too: an exactly allowed name passes; a name allowed by a
// prefix or the base is still scrubbed.
func TestAllowListAndScrub(t *testing.T) {
	env := []string{"PATH=/bin", "GITHUB_TOKEN=g", "AWS_SECRET_ACCESS_KEY=s", "AWS_REGION=r", "LC_SESSION=x"}
	out, dropped := Build(env, Options{Scrub: true, Allow: []string{"GITHUB_TOKEN", "AWS_*"}})
	assert.Equal(t, []string{"PATH=/bin", "GITHUB_TOKEN=g", "HOME=" + NoHome}, out)
	assert.Equal(t, []string{"AWS_REGION", "AWS_SECRET_ACCESS_KEY", "LC_SESSION"}, dropped)
}

// The agent defaults are added after the allow-list.
func TestAllowListThenAgentDefaults(t *testing.T) {
	out, _ := Build([]string{"PAGER=less", "HOME=/h"}, Options{Agent: true, Allow: []string{"X"}})
	assert.Contains(t, out, "PAGER=cat")
	assert.Contains(t, out, "NO_COLOR=1")
	assert.NotContains(t, out, "PAGER=less")
}
