//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/environ"
	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// profileHome is a HOME whose every startup file, when bash reads it,
// appends its name to the file "ran" there.
func profileHome(t *testing.T) (home string, ran func() string) {
	t.Helper()
	home = t.TempDir()
	log := filepath.Join(home, "ran")
	for _, name := range []string{".profile", ".bash_profile", ".bash_login", ".bashrc"} {
		script := "echo " + name + " >> '" + log + "'\n"
		require.NoError(t, os.WriteFile(filepath.Join(home, name), []byte(script), 0o644))
	}
	return home, func() string {
		b, err := os.ReadFile(log)
		if os.IsNotExist(err) {
			return ""
		}
		require.NoError(t, err)
		return string(b)
	}
}

// Debian's bash reads ~/.bashrc for bash -c when $SSH_CLIENT says sshd
// ran it: the case --no-login must also cover.
func TestBashReadsBashrcUnderSSH(t *testing.T) {
	home, ran := profileHome(t)
	cmd := exec.Command("/bin/bash", "-c", "true")
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "SSH_CLIENT=10.0.0.1 5555 22"}
	require.NoError(t, cmd.Run())
	if ran() == "" {
		t.Skip("this bash does not read ~/.bashrc under sshd (built without SSH_SOURCE_BASHRC)")
	}
	assert.Equal(t, ".bashrc\n", ran())
}

// By default bash is a login shell and reads the profile; --no-login runs
// bash -c and reads none, even where Debian's bash would read ~/.bashrc
// for a command run by sshd. The start frame says which.
func TestNoLoginReadsNoProfile(t *testing.T) {
	rows := []struct {
		name  string
		args  []string
		env   []string
		login bool
		ran   string
	}{
		{"login shell (default)", nil, nil, true, ".bash_profile\n"},
		{"--no-login", []string{"--no-login"}, nil, false, ""},
		{"--no-login under sshd", []string{"--no-login"}, []string{"SSH_CLIENT=10.0.0.1 5555 22", "SHLVL="}, false, ""},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			home, ran := profileHome(t)
			r := runShellsup(t, opts{args: row.args, env: append([]string{"HOME=" + home}, row.env...), command: "shopt -q login_shell && echo login"})
			totals := requireTotals(t, r)
			require.NotNil(t, r.start)
			assert.Equal(t, row.login, r.start.Login)
			want := ""
			if row.login {
				want = "login\n"
			}
			assert.Equal(t, want, totals.Stdout)
			assert.Equal(t, row.ran, ran(), "stderr %q", totals.Stderr)
		})
	}
}

// Without HOME in its environment, the command gets HOME=/nonexistent, in
// both modes, and bash never takes root's home (and profile) from passwd.
func TestMissingHomeIsNonexistent(t *testing.T) {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, reapertest.TokenVar+"=") {
			env = append(env, kv)
		}
	}
	for _, args := range [][]string{nil, {"--no-login"}} {
		t.Run(strings.Join(append([]string{"args"}, args...), " "), func(t *testing.T) {
			tok := reapertest.NewToken()
			cmd := exec.Command(shellsupBin, append(args, "--", `echo "$HOME"; echo ~`)...)
			cmd.Env = append(env, tok.Env())
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Run(), "stderr %q", stderr.String())
			assert.Equal(t, environ.NoHome+"\n"+environ.NoHome+"\n", stdout.String())
			reapertest.Check(t, tok)
		})
	}
	t.Run("a HOME that is set is kept", func(t *testing.T) {
		home := t.TempDir()
		r := runShellsup(t, opts{env: []string{"HOME=" + home}, command: `echo "$HOME"`})
		assert.Equal(t, home+"\n", requireTotals(t, r).Stdout)
	})
}

// envOf runs `env` under shellsup with extra and args, and returns the
// command's environment as a map.
func envOf(t *testing.T, args, extra []string) map[string]string {
	t.Helper()
	r := runShellsup(t, opts{args: args, env: extra, command: "env -0"})
	totals := requireTotals(t, r)
	require.Equal(t, 0, r.exit, "stderr %q", r.stderr)
	out := map[string]string{}
	for _, kv := range strings.Split(strings.TrimSuffix(totals.Stdout, "\x00"), "\x00") {
		name, value, _ := strings.Cut(kv, "=")
		out[name] = value
	}
	return out
}

// --scrub-env hides the credential variables from the command and keeps
// the rest; without it they pass.
func TestScrubEnvHidesCredentials(t *testing.T) {
	secrets := []string{"GITHUB_TOKEN=ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "AWS_SECRET_ACCESS_KEY=s3cr3t",
		"OPENAI_API_KEY=sk-x", "DB_PASSWORD=hunter2", "npm_token=t",
		"npm_config_//registry.npmjs.org/:_authToken=npm_x", "MYSQL_PWD=p", "GPG_PASSPHRASE=g", "CI_JOB_JWT_V2=j",
		"SLACK_WEBHOOK_URL=https://hooks.slack.com/x", "SECRET_KEY_BASE=b", "SENDGRID_APIKEY=SG.x", "OP_SESSION_my=o"}
	keep := []string{"KEEP_ME=1", "KEYBOARD=us", "TOKENIZER=bpe"}
	extra := append(append([]string{}, secrets...), keep...)

	plain := envOf(t, nil, extra)
	scrubbed := envOf(t, []string{"--scrub-env"}, extra)
	for _, kv := range secrets {
		name, value, _ := strings.Cut(kv, "=")
		// A forced tier runs shellsup through a /bin/sh wrapper, and dash
		// drops a variable whose name is no shell identifier before
		// shellsup sees it.
		if proctest.Tier() == "" || !strings.ContainsAny(name, "/:") {
			assert.Equal(t, value, plain[name], "without --scrub-env %s passes", name)
		}
		assert.NotContains(t, scrubbed, name)
	}
	for _, kv := range keep {
		name, value, _ := strings.Cut(kv, "=")
		assert.Equal(t, value, scrubbed[name], "--scrub-env keeps %s", name)
	}
	assert.Equal(t, plain["PATH"], scrubbed["PATH"])
}

// --agent-env sets every one of environ.AgentDefaults, over what the
// caller set; without it the caller's values stay.
func TestAgentEnvSetsTheDefaults(t *testing.T) {
	extra := []string{"PAGER=less", "TERM=xterm-256color", "UNRELATED=x"}
	plain := envOf(t, nil, extra)
	assert.Equal(t, "less", plain["PAGER"])
	assert.Equal(t, "xterm-256color", plain["TERM"])

	agent := envOf(t, []string{"--agent-env"}, extra)
	for _, kv := range environ.AgentDefaults {
		name, value, _ := strings.Cut(kv, "=")
		assert.Contains(t, agent, name)
		assert.Equal(t, value, agent[name], "%s", name)
	}
	assert.Equal(t, "x", agent["UNRELATED"])

	both := envOf(t, []string{"--agent-env", "--scrub-env"}, append(extra, "GH_TOKEN=x"))
	assert.Equal(t, "cat", both["PAGER"])
	assert.NotContains(t, both, "GH_TOKEN")
}

// --workspace: the command runs in the workspace by default, in a
// directory inside it, or not at all, with both paths quoted.
func TestWorkspace(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, outside := filepath.Join(root, "ws"), filepath.Join(root, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	require.NoError(t, os.Mkdir(outside, 0o755))
	require.NoError(t, os.Symlink(filepath.Join(ws, "sub"), filepath.Join(ws, "in")))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "out")))

	t.Run("default cwd is the workspace", func(t *testing.T) {
		r := runShellsup(t, opts{args: []string{"--workspace", ws}, command: "pwd"})
		assert.Equal(t, ws+"\n", requireTotals(t, r).Stdout)
		assert.Equal(t, ws, r.start.Cwd)
	})
	t.Run("a link that stays inside", func(t *testing.T) {
		in := filepath.Join(ws, "in")
		r := runShellsup(t, opts{args: []string{"--workspace=" + ws, "--cwd=" + in}, command: "pwd; pwd -P"})
		assert.Equal(t, in+"\n"+filepath.Join(ws, "sub")+"\n", requireTotals(t, r).Stdout)
	})
	for name, cwd := range map[string]string{
		"dot-dot escape": filepath.Join(ws, "sub", "..", ".."),
		"symlink escape": filepath.Join(ws, "out"),
	} {
		t.Run(name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "spawned")
			r := runShellsup(t, opts{args: []string{"--workspace=" + ws, "--cwd=" + cwd}, command: "touch " + marker})
			assertRefused(t, r, protocol.CategoryValidation, `outside workspace "`+ws+`"`, marker)
			assert.Contains(t, r.errf.Message, `cwd "`+filepath.Clean(cwd)+`"`)
		})
	}
	t.Run("a missing workspace", func(t *testing.T) {
		marker := filepath.Join(t.TempDir(), "spawned")
		missing := filepath.Join(root, "missing")
		cmd := exec.Command(shellsupBin, "--workspace", missing, "--", "touch "+marker)
		out, _ := cmd.CombinedOutput()
		assert.Equal(t, 125, cmd.ProcessState.ExitCode())
		assert.Equal(t, `shellsup: workspace "`+missing+`" does not exist`+"\n", string(out))
		assert.NoFileExists(t, marker)
	})
}

// bashMade are the variables bash itself sets in a non-login shell.
var bashMade = map[string]bool{"PWD": true, "SHLVL": true, "_": true, "OLDPWD": true}

// --env-allow passes only the named variables (exact, or a prefix ending
// in *) and the documented base; the leak token is allowed by name so the
// leak check still sees the command.
func TestEnvAllowPassesOnlyNamed(t *testing.T) {
	extra := []string{"FOO=1", "FOOBAR=2", "MY_1=a", "MY_2=b", "GITHUB_TOKEN=g", "LC_ALL=C", "TZ=UTC",
		"TMPDIR=/tmp", "SHELL=/bin/bash", "TERM=xterm", "LANG=C.UTF-8", "USER=u", "LOGNAME=u", "UNLISTED=x"}
	plain := envOf(t, []string{"--no-login"}, extra)
	assert.Equal(t, "2", plain["FOOBAR"], "without --env-allow everything passes")
	allowed := envOf(t, []string{"--no-login", "--env-allow", "FOO,MY_*", "--env-allow=" + reapertest.TokenVar}, extra)
	want := map[string]string{"FOO": "1", "MY_1": "a", "MY_2": "b", "LC_ALL": "C", "TZ": "UTC", "TMPDIR": "/tmp",
		"SHELL": "/bin/bash", "TERM": "xterm", "LANG": "C.UTF-8", "USER": "u", "LOGNAME": "u", "HOME": cleanHome, "PATH": plain["PATH"]}
	for name, value := range want {
		assert.Equal(t, value, allowed[name], "%s passes", name)
	}
	assert.Contains(t, allowed, reapertest.TokenVar)
	for name := range allowed {
		if _, ok := want[name]; !ok && !bashMade[name] && name != reapertest.TokenVar {
			t.Errorf("%s passed the allow-list", name)
		}
	}
}

// --env-allow with --scrub-env: a name listed exactly passes even if it
// looks like a credential; one passed by a prefix is still scrubbed. With
// --agent-env the defaults are added after the allow-list.
func TestEnvAllowComposes(t *testing.T) {
	extra := []string{"GITHUB_TOKEN=g", "AWS_SECRET_ACCESS_KEY=s", "AWS_REGION=r", "PAGER=less"}
	got := envOf(t, []string{"--scrub-env", "--agent-env", "--env-allow", "GITHUB_TOKEN,AWS_*," + reapertest.TokenVar}, extra)
	assert.Equal(t, "g", got["GITHUB_TOKEN"])
	assert.NotContains(t, got, "AWS_SECRET_ACCESS_KEY")
	assert.NotContains(t, got, "AWS_REGION")
	assert.Equal(t, "cat", got["PAGER"])
	assert.Equal(t, "1", got["NO_COLOR"])
}

// A bad --env-allow name is refused, quoted, and nothing is spawned.
func TestEnvAllowValidated(t *testing.T) {
	for _, bad := range []string{"", "A,,B", "A=1", "A B", "*", "A*B", "OK,"} {
		t.Run(bad, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "spawned")
			r := runShellsup(t, opts{args: []string{"--env-allow=" + bad}, command: "touch " + marker})
			assertRefused(t, r, protocol.CategoryValidation, "env-allow names must be", marker)
		})
	}
	r := runShellsup(t, opts{args: []string{"--env-allow", "GOOD,BAD=1"}, command: "true"})
	assertRefused(t, r, protocol.CategoryValidation, `(got "BAD=1")`, "")
}

// With --user, the allow-list is applied first and then HOME, USER and
// LOGNAME are the user's, in every tier.
func TestEnvAllowWithUser(t *testing.T) {
	pw := needUserNobody(t)
	home := pw.HomeDir
	if home == "" {
		home = environ.NoHome
	}
	for name, tier := range userTiers() {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"--no-login", "--user", "nobody", "--cwd", "/", "--env-allow", "KEEP," + reapertest.TokenVar}, tier...)
			got := envOf(t, args, []string{"KEEP=k", "DROP=d", "USER=root", "LOGNAME=root"})
			assert.Equal(t, "k", got["KEEP"])
			assert.NotContains(t, got, "DROP")
			assert.Equal(t, home, got["HOME"])
			assert.Equal(t, "nobody", got["USER"])
			assert.Equal(t, "nobody", got["LOGNAME"])
		})
	}
}

// What the README says no environment option does: the allow-list keeps a
// variable out of the command's environment, yet a same-uid command reads
// its harness's (here this test binary's) whole environment from /proc;
// under --pidns the harness has no pid the command can name.
func TestEnvAllowDoesNotHideTheHarnessEnviron(t *testing.T) {
	probe := fmt.Sprintf(`if tr '\0' '\n' < /proc/%d/environ 2>/dev/null | grep -q '^PATH='; then echo read; else echo hidden; fi; echo "path=${PATH:+set}"`, os.Getpid())
	plain := "read\npath=set\n"
	if proctest.Tier() == "pidns" { // the forced tier adds --pidns to every run
		plain = "hidden\npath=set\n"
	}
	for _, row := range []struct {
		args []string
		want string
	}{
		{nil, plain},
		{[]string{"--pidns"}, "hidden\npath=set\n"},
	} {
		args := append([]string{"--no-login", "--env-allow", "NOTHING_ELSE," + reapertest.TokenVar}, row.args...)
		r := runShellsup(t, opts{args: args, command: probe})
		assert.Equal(t, row.want, requireTotals(t, r).Stdout, "%v", row.args)
	}
}
