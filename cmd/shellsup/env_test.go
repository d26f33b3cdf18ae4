//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/environ"
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
		"OPENAI_API_KEY=sk-x", "DB_PASSWORD=hunter2", "npm_token=t"}
	keep := []string{"KEEP_ME=1", "KEYBOARD=us", "TOKENIZER=bpe"}
	extra := append(append([]string{}, secrets...), keep...)

	plain := envOf(t, nil, extra)
	scrubbed := envOf(t, []string{"--scrub-env"}, extra)
	for _, kv := range secrets {
		name, value, _ := strings.Cut(kv, "=")
		assert.Equal(t, value, plain[name], "without --scrub-env %s passes", name)
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
