package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	shellsup "github.com/shellsup/shellsup/bindings/go"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// A trial is one shape running under one tool.
type trial struct {
	returned chan time.Duration // receives the time the tool took to return, once
	owned    []int              // the tool's own process, never counted as left behind
	abort    func()             // ends the tool itself when it did not return in time
	output   func() output      // what reached the caller, read after the clean-up
}

// output is what reached the caller: its size, and its first headMax bytes (to tell a tool
// that ran the command from one that failed before it).
type output struct {
	n    int64 // -1: unknown
	head string
}

const headMax = 4096

// headOf is the first headMax bytes of b.
func headOf(b []byte) string { return string(b[:min(len(b), headMax)]) }

// counter counts what is written to it and keeps its first headMax bytes.
type counter struct {
	n    int64
	head []byte
}

func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	if room := headMax - len(c.head); room > 0 {
		c.head = append(c.head, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// A tool runs a shape; missing says why it cannot here ("" when it can).
type tool struct {
	name    string
	missing string
	start   func(script string, tok reapertest.Token) (*trial, error)
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

// tools lists every tool of the table, in its order.
func tools() []tool {
	d, k := secs(*deadline), secs(killAfter)
	timeout := []string{"timeout", "-k", k, d}
	bwrap := []string{"bwrap", "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--die-with-parent", "--"}
	return []tool{
		argvTool("`timeout -k "+k+" "+d+" bash -c`", "timeout", timeout),
		argvTool("`tini -s -g` (under `timeout -k "+k+" "+d+"`)", "tini", append(timeout, "tini", "-s", "-g", "--")),
		systemdTool(d),
		argvTool("`bwrap --unshare-pid --die-with-parent` (under `timeout -k "+k+" "+d+"`)", "bwrap", append(timeout, bwrap...)),
		pythonTool(),
		pythonBindingTool(),
		{name: "Go `exec.CommandContext` (" + d + " s)", start: func(s string, tok reapertest.Token) (*trial, error) { return goExec(s, tok, 0) }},
		{name: "Go `exec.CommandContext` + `WaitDelay` " + k + " s", start: func(s string, tok reapertest.Token) (*trial, error) { return goExec(s, tok, killAfter) }},
		{name: "`shellsup --timeout " + d + " --grace " + k + " --`", start: func(s string, tok reapertest.Token) (*trial, error) {
			return startArgv([]string{*bin, "--timeout", d, "--grace", k, "--", s}, tok)
		}},
		{name: "Go binding `shellsup.Run` (Timeout " + d + " s, Grace " + k + " s)", start: goBinding},
	}
}

// argvTool is a command-line wrapper: prefix, then bash -c SCRIPT.
func argvTool(name, exe string, prefix []string) tool {
	t := tool{name: name}
	if _, err := exec.LookPath(exe); err != nil {
		t.missing = exe + " is not installed"
		return t
	}
	t.start = func(s string, tok reapertest.Token) (*trial, error) {
		return startArgv(append(append([]string{}, prefix...), "/bin/bash", "-c", s), tok)
	}
	return t
}

// systemdTool is systemd-run --scope, which needs a running systemd to talk to.
func systemdTool(d string) tool {
	t := argvTool("`systemd-run --scope -p RuntimeMaxSec="+d+"`", "systemd-run",
		[]string{"systemd-run", "--scope", "--quiet", "-p", "RuntimeMaxSec=" + d, "--"})
	if t.missing == "" {
		if fi, err := os.Stat("/run/systemd/system"); err != nil || !fi.IsDir() {
			t.missing, t.start = "no systemd here (/run/systemd/system is absent)", nil
		}
	}
	return t
}

// env is this process's environment with an empty HOME and the trial's token.
func env(tok reapertest.Token) []string {
	return append(os.Environ(), "HOME="+home, tok.Env())
}

// startArgv starts argv with stdout and stderr on a pipe this process drains and counts, and
// times the tool until it exits (not until the pipe closes: a leftover may hold it).
func startArgv(argv []string, tok reapertest.Token) (*trial, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("making the output pipe: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env(tok), home, w, w
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	w.Close()
	counted := make(chan output, 1)
	go func() {
		var c counter
		_, _ = io.Copy(&c, r)
		r.Close()
		counted <- output{c.n, string(c.head)}
	}()
	tr := &trial{returned: make(chan time.Duration, 1), owned: []int{cmd.Process.Pid}}
	go func() {
		_ = cmd.Wait()
		tr.returned <- time.Since(start)
	}()
	tr.abort = func() { _ = cmd.Process.Kill() } // our child, not yet reaped: its pid is its own
	tr.output = func() output { return within(counted) }
	return tr, nil
}

// within returns what ch yields within 5 s, or an unknown output.
func within(ch <-chan output) output {
	select {
	case o := <-ch:
		return o
	case <-time.After(5 * time.Second):
		return output{n: -1}
	}
}

// goExec is the os/exec way: CommandContext with the deadline, output in a bytes.Buffer, and
// optionally WaitDelay (Go's own answer to a pipe held open by a grandchild).
func goExec(script string, tok reapertest.Token, waitDelay time.Duration) (*trial, error) {
	ctx, cancel := context.WithTimeout(context.Background(), *deadline)
	cmd := exec.CommandContext(ctx, "/bin/bash", "-c", script)
	var out bytes.Buffer
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr, cmd.WaitDelay = env(tok), home, &out, &out, waitDelay
	start := time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("starting bash: %w", err)
	}
	tr := &trial{returned: make(chan time.Duration, 1), abort: func() {}}
	counted := make(chan output, 1)
	go func() {
		_ = cmd.Wait()
		tr.returned <- time.Since(start)
		cancel()
		counted <- output{int64(out.Len()), headOf(out.Bytes())} // Wait has returned: the copying is over
	}()
	tr.output = func() output { return within(counted) }
	return tr, nil
}

// goBinding is shellsup's Go binding, Run with the same deadline and grace.
func goBinding(script string, tok reapertest.Token) (*trial, error) {
	req := shellsup.Request{Command: script, Timeout: *deadline, Grace: new(killAfter), Binary: *bin, Env: env(tok), Cwd: home}
	tr := &trial{returned: make(chan time.Duration, 1), abort: func() {}}
	counted := make(chan output, 1)
	start := time.Now()
	go func() {
		res, err := shellsup.Run(context.Background(), req)
		tr.returned <- time.Since(start)
		if err != nil && res.Command == "" {
			counted <- output{-1, "the Go binding's Run: " + err.Error()}
			return
		}
		both := res.Stdout + res.Stderr
		counted <- output{int64(len(both)), headOf([]byte(both))}
	}()
	tr.output = func() output { return within(counted) }
	return tr, nil
}

// pySubprocess runs SCRIPT with subprocess.run(capture_output=True, timeout=DEADLINE), the
// token in the child's environment only, and prints the time subprocess.run took to return
// and the bytes it captured, as JSON.
const pySubprocess = `import json, os, subprocess, sys, time
script, tok, deadline = sys.argv[1], sys.argv[2], float(sys.argv[3])
env = dict(os.environ)
env[tok.split("=", 1)[0]] = tok.split("=", 1)[1]
start = time.perf_counter()
try:
    r = subprocess.run(["/bin/bash", "-c", script], capture_output=True, timeout=deadline, env=env)
except subprocess.TimeoutExpired as e:
    r = e
seconds = time.perf_counter() - start
out = (r.stdout or b"") + (r.stderr or b"")
print(json.dumps({"seconds": seconds, "bytes": len(out), "head": out[:4096].decode("utf-8", "replace")}))
`

// pyBinding runs SCRIPT with shellsup's Python binding, shell.run(timeout=DEADLINE,
// grace=GRACE), the token in the command's environment only, and prints as pySubprocess does.
const pyBinding = `import json, os, sys, time
import shellsup as shell
script, tok, deadline, grace = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
env = dict(os.environ)
env[tok.split("=", 1)[0]] = tok.split("=", 1)[1]
start = time.perf_counter()
r = shell.run(script, timeout=deadline, grace=grace, env=env, progress=None)
seconds = time.perf_counter() - start
out = r["stdout"] + r["stderr"]
print(json.dumps({"seconds": seconds, "bytes": len(out.encode()), "head": out[:4096]}))
`

// pythonTool is Python's subprocess.run with a timeout, the drop-in shellsup's Python binding
// replaces.
func pythonTool() tool {
	t := tool{name: "Python `subprocess.run(capture_output=True, timeout=" + secs(*deadline) + ")`"}
	if *python == "" {
		t.missing = "no --python given"
		return t
	}
	if _, err := exec.LookPath(*python); err != nil {
		t.missing = *python + " is not installed"
		return t
	}
	t.start = func(s string, tok reapertest.Token) (*trial, error) {
		return startPython(pySubprocess, []string{s, tok.Env(), secs(*deadline)}, nil)
	}
	return t
}

// pythonBindingTool is shellsup's Python binding, imported from bindings/python/src.
func pythonBindingTool() tool {
	t := pythonTool()
	t.name = "Python binding `shell.run(timeout=" + secs(*deadline) + ", grace=" + secs(killAfter) + ")`"
	src, err := filepath.Abs("bindings/python/src")
	if t.missing == "" && err == nil {
		if _, err = os.Stat(filepath.Join(src, "shellsup", "__init__.py")); err != nil {
			t.missing = "bindings/python/src is not here (run from the repository's root)"
		} else if exec.Command(*python, "-c", "import msgpack").Run() != nil {
			t.missing = "msgpack is not installed for " + *python
		}
	}
	if t.missing != "" {
		t.start = nil
		return t
	}
	extra := []string{"PYTHONPATH=" + src, "SHELLSUP_BIN=" + *bin}
	t.start = func(s string, tok reapertest.Token) (*trial, error) {
		return startPython(pyBinding, []string{s, tok.Env(), secs(*deadline), secs(killAfter)}, extra)
	}
	return t
}

// startPython runs program with args; the Python process itself does not carry the token
// (it passes it to the command's environment only).
func startPython(program string, args, extraEnv []string) (*trial, error) {
	cmd := exec.Command(*python, append([]string{"-c", program}, args...)...)
	cmd.Env, cmd.Dir = append(append(os.Environ(), "HOME="+home), extraEnv...), home
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", *python, err)
	}
	tr := &trial{returned: make(chan time.Duration, 1), owned: []int{cmd.Process.Pid}}
	counted := make(chan output, 1)
	go func() {
		err := cmd.Wait()
		var rep struct {
			Seconds float64 `json:"seconds"`
			Bytes   int64   `json:"bytes"`
			Head    string  `json:"head"`
		}
		if err == nil {
			err = json.Unmarshal(out.Bytes(), &rep)
		}
		if err != nil {
			rep.Bytes, rep.Head = -1, fmt.Sprintf("%s: %v", *python, err)
		}
		tr.returned <- time.Duration(rep.Seconds * float64(time.Second))
		counted <- output{rep.Bytes, rep.Head}
	}()
	tr.abort = func() { _ = cmd.Process.Kill() }
	tr.output = func() output { return within(counted) }
	return tr, nil
}
