package shellsup

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/environ"
	"github.com/shellsup/shellsup/reaper/reapertest"
	"github.com/shellsup/shellsup/request"
)

// argvOf runs req against a stand-in binary that records its arguments,
// one per line, and exits; it returns them. The run itself fails (the
// stand-in sends no frames), which is not what is tested here; Run then
// runs "shellsup sweep", which the stand-in answers as shellsup would.
func argvOf(t *testing.T, req Request) []string {
	t.Helper()
	log := filepath.Join(t.TempDir(), "argv")
	req.Binary = writeScript(t, `[ "$*" = sweep ] && { echo 'shellsup: sweep: no stale leaves'; exit 0; }
for a in "$@"; do printf '%s\n' "$a"; done > '`+log+`'`)
	_, err := Run(context.Background(), req)
	require.Error(t, err)
	raw, rerr := os.ReadFile(log)
	require.NoError(t, rerr, "the binary was not run: %v", err)
	return strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
}

// Each option becomes the flag of the same name, in --name=value form,
// before "--"; the zero Request adds none.
func TestShellOptionsBecomeFlags(t *testing.T) {
	plain := argvOf(t, Request{Command: "true"})
	assert.Equal(t, []string{"--frames", "--timeout=120", "--pidns-auto", "--", "true"}, plain)

	spill := t.TempDir() // 0700, as a spill directory must be
	all := argvOf(t, Request{Command: "-x", NoLogin: true, ScrubEnv: true, AgentEnv: true, EnvAllow: []string{"A", "LC_*"}, Workspace: "/w",
		RedactPatterns: []string{`-tok_[a-z]+`, `a=b`}, Spill: spill, SpillMax: 64 << 20, Capture: "head+tail"})
	assert.Equal(t, []string{"--frames", "--timeout=120", "--spill=" + spill, "--spill-max=67108864",
		"--pidns-auto", "--no-login", "--scrub-env", "--agent-env", "--env-allow=A,LC_*", "--workspace=/w",
		"--redact", "--redact-pattern=-tok_[a-z]+", "--redact-pattern=a=b",
		"--capture=head+tail", "--", "-x"}, all)

	assert.Equal(t, []string{"--frames", "--timeout=120", "--pidns-auto", "--redact", "--capture=tail", "--", "true"},
		argvOf(t, Request{Command: "true", Redact: true, Capture: "tail"}))
}

// The PID namespace: --pidns-auto by default, --pidns with PIDNamespace,
// neither with NoPIDNamespace; both at once are refused, nothing spawned.
func TestPidnsFlags(t *testing.T) {
	assert.Equal(t, []string{"--frames", "--timeout=120", "--pidns", "--", "true"},
		argvOf(t, Request{Command: "true", PIDNamespace: true}))
	assert.Equal(t, []string{"--frames", "--timeout=120", "--", "true"},
		argvOf(t, Request{Command: "true", NoPIDNamespace: true}))
	_, err := Run(context.Background(), Request{Command: "true", PIDNamespace: true, NoPIDNamespace: true, Binary: "/nonexistent/shellsup"})
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, CategoryValidation, e.Category)
	assert.Contains(t, e.Error(), "PIDNamespace and NoPIDNamespace cannot both be true")
}

// The options that can be checked cheaply are refused before anything is
// spawned, with the value quoted.
func TestShellOptionsValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Request)
		want string
	}{
		{"capture unknown", func(r *Request) { r.Capture = "middle" }, `capture must be "head", "tail" or "head+tail" ("" means "head") (got "middle")`},
		{"capture case", func(r *Request) { r.Capture = "Tail" }, `capture must be "head", "tail" or "head+tail" ("" means "head") (got "Tail")`},
		{"spill max negative", func(r *Request) { r.SpillMax = -1; r.Spill = "/tmp" }, "spill max must be at least 0 bytes (0: the default, 268435456) (got -1)"},
		{"spill max without spill", func(r *Request) { r.SpillMax = 1024 }, "spill max 1024 needs a spill directory (Request.Spill)"},
		{"spill with NUL", func(r *Request) { r.Spill = "/tmp/a\x00" }, `spill directory must not contain a NUL byte (got "/tmp/a\x00")`},
		{"workspace not UTF-8", func(r *Request) { r.Workspace = "/tmp/\xff" }, `workspace must be a valid UTF-8 path without NUL bytes (got "/tmp/\xff")`},
		{"redact pattern invalid", func(r *Request) { r.RedactPatterns = []string{"ok", "a(b"} }, `redact pattern "a(b" does not compile: error parsing regexp: missing closing ): ` + "`a(b`"},
		{"redact pattern empty", func(r *Request) { r.RedactPatterns = []string{""} }, `redact pattern must not be empty (got "")`},
		{"env allow empty name", func(r *Request) { r.EnvAllow = []string{"A", ""} }, "env-allow names must be " + request.EnvAllowForm + ` (got "")`},
		{"env allow with =", func(r *Request) { r.EnvAllow = []string{"A=1"} }, "env-allow names must be " + request.EnvAllowForm + ` (got "A=1")`},
		{"env allow with comma", func(r *Request) { r.EnvAllow = []string{"A,B"} }, "env-allow names must be " + request.EnvAllowForm + ` (got "A,B")`},
		{"env allow with space", func(r *Request) { r.EnvAllow = []string{"A B"} }, "env-allow names must be " + request.EnvAllowForm + ` (got "A B")`},
		{"env allow with NUL", func(r *Request) { r.EnvAllow = []string{"A\x00"} }, "env-allow names must be " + request.EnvAllowForm + ` (got "A\x00")`},
		{"env allow bare star", func(r *Request) { r.EnvAllow = []string{"*"} }, "env-allow names must be " + request.EnvAllowForm + `; * only at the end of a prefix (got "*")`},
		{"redact pattern matching nothing", func(r *Request) { r.RedactPatterns = []string{"a*"} }, `redact pattern "a*" matches the empty string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sentinel := filepath.Join(t.TempDir(), "spawned")
			req := newRequest(t, "true")
			req.Binary = writeScript(t, "touch "+sentinel)
			tc.edit(&req)
			res, err := Run(context.Background(), req)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, CategoryValidation, e.Category)
			assert.Equal(t, tc.want, e.Message)
			assert.Zero(t, res)
			assert.NoFileExists(t, sentinel, "nothing may be spawned")
		})
	}
}

// A bad redact pattern is refused by the binding in the binary's words,
// word for word: both call redact.Compile.
func TestRedactPatternRefusedInTheBinarysWords(t *testing.T) {
	for _, p := range []string{"a(b", "", "a*"} {
		_, err := Run(context.Background(), Request{Command: "true", RedactPatterns: []string{p}})
		var e *Error
		require.ErrorAs(t, err, &e)
		cmd := exec.Command(os.Getenv(BinaryEnv), "--redact-pattern="+p, "--", "true")
		out, cerr := cmd.CombinedOutput()
		var exit *exec.ExitError
		require.ErrorAs(t, cerr, &exit)
		assert.Equal(t, 125, exit.ExitCode())
		assert.Equal(t, "shellsup: "+e.Message, strings.TrimSpace(string(out)), "pattern %q", p)
	}
}

// An Env without HOME gives the command HOME=/nonexistent: bash does not
// take root's home, and a login shell reads no profile from it.
func TestEnvWithoutHome(t *testing.T) {
	req := newRequest(t, `echo "$HOME"; echo ~`)
	var env []string
	for _, kv := range req.Env {
		if !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	req.Env = env
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, environ.NoHome+"\n"+environ.NoHome+"\n", res.Stdout)
	assert.Empty(t, res.Stderr)
}

// NoLogin: bash reads no profile. The same HOME read in login mode shows
// the test can tell.
func TestNoLogin(t *testing.T) {
	for _, noLogin := range []bool{false, true} {
		home := t.TempDir()
		ran := filepath.Join(home, "ran")
		for _, name := range []string{".profile", ".bash_profile", ".bashrc"} {
			require.NoError(t, os.WriteFile(filepath.Join(home, name), []byte("echo "+name+" >> '"+ran+"'\n"), 0o644))
		}
		req := newRequest(t, "shopt -q login_shell && echo login || echo plain")
		req.Env = append(req.Env, "HOME="+home)
		req.NoLogin = noLogin
		res, err := Run(context.Background(), req)
		require.NoError(t, err)
		got, _ := os.ReadFile(ran) // absent when no profile ran
		if noLogin {
			assert.Equal(t, "plain\n", res.Stdout)
			assert.Empty(t, string(got))
		} else {
			assert.Equal(t, "login\n", res.Stdout)
			assert.Equal(t, ".bash_profile\n", string(got))
		}
	}
}

func TestScrubAndAgentEnv(t *testing.T) {
	req := newRequest(t, `echo "token=${GITHUB_TOKEN-unset} key=${AWS_SECRET_ACCESS_KEY-unset} keep=$KEEP pager=$PAGER color=${NO_COLOR-unset} term=$TERM"`)
	req.Env = append(req.Env, "GITHUB_TOKEN=ghp_x", "AWS_SECRET_ACCESS_KEY=s", "KEEP=1", "PAGER=less", "TERM=xterm")
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "token=ghp_x key=s keep=1 pager=less color=unset term=xterm\n", res.Stdout)

	req.ScrubEnv, req.AgentEnv = true, true
	res, err = Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "token=unset key=unset keep=1 pager=cat color=1 term=dumb\n", res.Stdout)
}

func TestWorkspace(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, outside := filepath.Join(root, "ws"), filepath.Join(root, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	require.NoError(t, os.Mkdir(outside, 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "out")))

	req := newRequest(t, "pwd")
	req.Workspace = ws
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, ws, res.Cwd, "Cwd \"\" means the workspace")
	assert.Equal(t, ws+"\n", res.Stdout)

	req.Cwd = filepath.Join(ws, "sub")
	res, err = Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, req.Cwd+"\n", res.Stdout)

	for _, cwd := range []string{filepath.Join(ws, "out"), filepath.Join(ws, "sub", "..", "..")} {
		marker := filepath.Join(t.TempDir(), "spawned")
		req := newRequest(t, "touch "+marker)
		req.Workspace, req.Cwd = ws, cwd
		res, err := Run(context.Background(), req)
		var e *Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, CategoryValidation, e.Category)
		assert.Contains(t, e.Message, `cwd "`+filepath.Clean(cwd)+`" resolves to`)
		assert.Contains(t, e.Message, `outside workspace "`+ws+`"`)
		assert.Zero(t, res)
		assert.NoFileExists(t, marker)
	}
}

// EnvAllow: only the named variables and the base reach the command; with
// ScrubEnv an exactly named one passes, one named by a prefix does not.
func TestEnvAllow(t *testing.T) {
	req := newRequest(t, `echo "keep=${KEEP-unset} drop=${DROP-unset} my=${MY_X-unset} lang=${LANG-unset} tok=${GITHUB_TOKEN-unset} aws=${AWS_REGION-unset} leak=${`+reapertest.TokenVar+`:+set}"`)
	req.NoLogin = true
	req.Env = append(req.Env, "KEEP=1", "DROP=2", "MY_X=3", "GITHUB_TOKEN=g", "AWS_REGION=r")
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "keep=1 drop=2 my=3 lang=C.UTF-8 tok=g aws=r leak=set\n", res.Stdout)

	req.EnvAllow = []string{"KEEP", "MY_*", "GITHUB_TOKEN", "AWS_*", reapertest.TokenVar}
	res, err = Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "keep=1 drop=unset my=3 lang=C.UTF-8 tok=g aws=r leak=set\n", res.Stdout)

	req.ScrubEnv = true
	res, err = Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "keep=1 drop=unset my=3 lang=C.UTF-8 tok=g aws=unset leak=set\n", res.Stdout)
}
