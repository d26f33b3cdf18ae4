//go:build linux

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// The binaries under test, built once by TestMain: the production build and
// the build with test seams (SHELLSUP_TEST_PROC_ROOT,
// SHELLSUP_TEST_NO_CONTAINMENT).
var (
	shellsupBin string
	seamsBin    string
	cleanHome   string // an empty HOME: a login shell then skips the heavy ~/.profile
)

func TestMain(m *testing.M) {
	proctest.Main(m, proctest.Config{
		Helpers: helpers,
		Builds: []proctest.Build{
			{Pkg: "./cmd/shellsup", Out: &shellsupBin},
			{Pkg: "./cmd/shellsup", Tags: "testseams", Out: &seamsBin},
		},
		Home: &cleanHome,
	})
}

// baseEnv is the environment every shellsup under test gets: the test's
// own, with a clean HOME and the leak token.
func baseEnv(tok reapertest.Token) []string {
	env := []string{tok.Env(), "HOME=" + cleanHome}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, reapertest.TokenVar+"=") {
			env = append(env, kv)
		}
	}
	return env
}

// opts describe one shellsup run in frames mode.
type opts struct {
	bin     string   // default shellsupBin
	args    []string // options before "--"
	command string
	env     []string // extra NAME=value entries
	control bool     // stdin is a pipe the test holds (the control channel)
	// onFrame sees each frame as it arrives; r lets it act on the run
	// (cancel, close stdin, signal shellsup).
	onFrame     func(r *running, f protocol.Frame)
	noLeakCheck bool
	owned       []int // the test's own running children, not leaks
}

// result is what a run produced.
type result struct {
	frames  []protocol.Frame
	start   *protocol.Start
	totals  *protocol.Totals
	errf    *protocol.Error
	exit    int
	elapsed time.Duration
	stderr  string
	stdout  string // joined progress text of stdout
	decErr  error  // a frame decoding error, if any
}

// running is a shellsup in flight.
type running struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   io.ReadCloser
	mu    sync.Mutex
	text  map[string]*strings.Builder
}

func (r *running) send(f protocol.Frame) error {
	return protocol.NewEncoder(r.stdin).Encode(f)
}

func (r *running) sendRaw(b []byte) error {
	_, err := r.stdin.Write(b)
	return err
}

func (r *running) closeStdin() { r.stdin.Close() }

func (r *running) signal(sig os.Signal) { _ = r.cmd.Process.Signal(sig) } // it may have exited

// stdoutSoFar is the stdout progress text received so far.
func (r *running) stdoutSoFar() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.text["stdout"].String()
}

// runShellsup runs shellsup --frames and collects its frames. The test
// fails if a process carrying the run's token survives it.
func runShellsup(t *testing.T, o opts) result {
	t.Helper()
	tok := reapertest.NewToken()
	bin := o.bin
	if bin == "" {
		bin = shellsupBin
	}
	args := append([]string{"--frames"}, o.args...)
	args = append(args, "--", o.command)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(baseEnv(tok), o.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	r := &running{cmd: cmd, text: map[string]*strings.Builder{"stdout": {}, "stderr": {}}}
	var err error
	if o.control {
		r.stdin, err = cmd.StdinPipe()
		require.NoError(t, err)
	}
	r.out, err = cmd.StdoutPipe()
	require.NoError(t, err)
	began := time.Now()
	require.NoError(t, cmd.Start())
	res := result{}
	dec := protocol.NewDecoder(r.out)
	for {
		var f protocol.Frame
		if err := dec.Decode(&f); err != nil {
			if !errors.Is(err, io.EOF) {
				res.decErr = err
			}
			break
		}
		res.frames = append(res.frames, f)
		switch f := f.(type) {
		case *protocol.Start:
			res.start = f
		case *protocol.Progress:
			r.mu.Lock()
			r.text[f.Stream].WriteString(f.Text)
			r.mu.Unlock()
		case *protocol.Totals:
			res.totals = f
		case *protocol.Error:
			res.errf = f
		}
		if o.onFrame != nil {
			o.onFrame(r, f)
		}
	}
	_ = cmd.Wait() // the exit status is read below
	res.elapsed = time.Since(began)
	res.exit = cmd.ProcessState.ExitCode()
	res.stderr = stderr.String()
	res.stdout = r.text["stdout"].String()
	if r.stdin != nil {
		r.stdin.Close()
	}
	if !o.noLeakCheck {
		reapertest.Check(t, tok, o.owned...)
	}
	return res
}

// frameTypes lists the types of the frames, in order.
func (r result) frameTypes() []string {
	out := make([]string, len(r.frames))
	for i, f := range r.frames {
		out[i] = f.Type()
	}
	return out
}

// requireTotals fails unless the run ended with a totals frame, last.
func requireTotals(t *testing.T, r result) *protocol.Totals {
	t.Helper()
	require.NoError(t, r.decErr)
	require.NotNil(t, r.totals, "no totals frame; frames %v, exit %d, stderr %q", r.frameTypes(), r.exit, r.stderr)
	require.Equal(t, "totals", r.frames[len(r.frames)-1].Type(), "totals must be the last frame: %v", r.frameTypes())
	require.Empty(t, r.totals.Cleanup.Stragglers, "stragglers")
	return r.totals
}

// onReady calls act once, when the command's stdout contains "ready".
func onReady(act func(r *running)) func(r *running, f protocol.Frame) {
	done := false
	return func(r *running, f protocol.Frame) {
		if !done && strings.Contains(r.stdoutSoFar(), "ready") {
			done = true
			act(r)
		}
	}
}

// skipInPidnsTier skips a test whose command acts on $PPID as shellsup:
// on a test run that forces --pidns, $PPID is the namespace's init, and
// TestPidnsAttacksReachOnlyTheInit covers what the command can do to it.
func skipInPidnsTier(t *testing.T) {
	t.Helper()
	if proctest.Tier() == "pidns" {
		t.Skip("the command targets $PPID, which inside the forced PID namespace is the init, not shellsup")
	}
}
