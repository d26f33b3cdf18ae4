//go:build linux

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// concurrencySize is the number of shellsups and the setsid sleepers each leaves: small in make
// test, SHELLSUP_CONCURRENCY=32x50 in make soak.
func concurrencySize(t *testing.T) (runs, sleepers int) {
	runs, sleepers = 8, 10
	if v := os.Getenv("SHELLSUP_CONCURRENCY"); v != "" {
		_, err := fmt.Sscanf(v, "%dx%d", &runs, &sleepers)
		require.NoError(t, err, "SHELLSUP_CONCURRENCY must be RUNSxSLEEPERS, like 32x50 (got %q)", v)
		require.True(t, runs >= 2 && runs <= 64 && sleepers >= 1 && sleepers <= 100,
			"SHELLSUP_CONCURRENCY allows 2-64 runs of 1-100 sleepers (got %q)", v)
	}
	return runs, sleepers
}

// procID names one process for its whole life: a pid is reused, a pid with its start time is not.
type procID struct {
	pid   int
	start uint64 // starttime, field 22 of /proc/PID/stat, in clock ticks since boot
}

// readProcID returns pid's identity and state letter; ok is false once it is gone.
func readProcID(pid int) (id procID, state byte, ok bool) {
	st, err := proctest.Stat(pid)
	if err != nil {
		return procID{}, 0, false
	}
	return procID{pid, st.Start}, st.State, true
}

// concRun is one shellsup of the concurrency test.
type concRun struct {
	tok    reapertest.Token
	long   bool   // waits for the release file; the others finish at once
	pids   string // file each of its processes appends its pid to
	procs  []procID
	totals *protocol.Totals
	exit   int
	err    error
}

// concCommand is the shell text of one run: `sleepers` setsid sleepers and one TERM-ignorer, each
// recording its pid (all self-destruct after 120 s), then "ready"; a long run then waits for
// release to exist (for at most 120 s).
func concCommand(sleepers int, pids, release string, long bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "for i in $(seq %d); do setsid sh -c 'echo $$ >> %s; exec sleep 120' & done\n", sleepers, pids)
	fmt.Fprintf(&b, "(trap '' TERM; exec sh -c 'echo $$ >> %s; exec sleep 120') &\n", pids)
	fmt.Fprintf(&b, "until [ \"$(wc -l < %s)\" -ge %d ]; do sleep 0.01; done\necho ready\n", pids, sleepers+1)
	if long {
		fmt.Fprintf(&b, "for i in $(seq 2400); do [ -e %s ] && break; sleep 0.05; done\n", release)
	}
	return b.String()
}

// start runs one shellsup; ready is closed when its command has said "ready" (or it ended), done
// when it has returned.
func (r *concRun) start(command string, ready, done chan<- struct{}) {
	defer close(done)
	readyOnce := sync.OnceFunc(func() { close(ready) })
	defer readyOnce()
	cmd := exec.Command(shellsupBin, "--frames", "--grace", "0.5", "--", command)
	cmd.Env = baseEnv(r.tok)
	out, err := cmd.StdoutPipe()
	if err != nil {
		r.err = err
		return
	}
	if err := cmd.Start(); err != nil {
		r.err = err
		return
	}
	dec := protocol.NewDecoder(out)
	var text strings.Builder
	for {
		var f protocol.Frame
		if err := dec.Decode(&f); err != nil {
			if !errors.Is(err, io.EOF) {
				r.err = err
			}
			break
		}
		switch f := f.(type) {
		case *protocol.Progress:
			text.WriteString(f.Text)
			if strings.Contains(text.String(), "ready") {
				readyOnce()
			}
		case *protocol.Totals:
			r.totals = f
		}
	}
	_ = cmd.Wait() // the status is read next
	r.exit = cmd.ProcessState.ExitCode()
}

// record reads the run's pid file and identifies each process.
func (r *concRun) record(want int) error {
	b, err := os.ReadFile(r.pids)
	if err != nil {
		return err
	}
	for _, l := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(l)
		if err != nil {
			return fmt.Errorf("pid file %s: %w", r.pids, err)
		}
		id, _, ok := readProcID(pid)
		if !ok {
			return fmt.Errorf("process %d of the run is gone before any cleanup", pid)
		}
		r.procs = append(r.procs, id)
	}
	if len(r.procs) != want {
		return fmt.Errorf("pid file %s lists %d processes, want %d", r.pids, len(r.procs), want)
	}
	return nil
}

// TestConcurrentRunsNeverCross: many shellsups at once, each leaving setsid sleepers and a
// TERM-ignorer. Half return at once, half wait. When every short run has returned (its cleanup
// done), every process of every long run must still be the same process (pid and start time),
// alive and not stopped: no run signalled another run's processes. Each short run signalled
// exactly its own processes. Then the long runs are released; all return and nothing is left.
func TestConcurrentRunsNeverCross(t *testing.T) {
	if proctest.Tier() == "pidns" {
		t.Skip("the runs record their processes' pids as bash sees them, which inside a PID namespace are not the host's")
	}
	n, sleepers := concurrencySize(t)
	dir := t.TempDir()
	release := filepath.Join(dir, "release")
	runs := make([]*concRun, n)
	ready := make([]chan struct{}, n)
	done := make([]chan struct{}, n)
	for i := range runs {
		runs[i] = &concRun{tok: reapertest.NewToken(), long: i%2 == 1, pids: filepath.Join(dir, fmt.Sprintf("pids-%d", i))}
		ready[i], done[i] = make(chan struct{}), make(chan struct{})
		go runs[i].start(concCommand(sleepers, runs[i].pids, release, runs[i].long), ready[i], done[i])
	}
	defer func() { // whatever happened: release, wait, then prove nothing is left
		_ = os.WriteFile(release, nil, 0o644)
		for _, d := range done {
			<-d
		}
		for _, r := range runs {
			reapertest.Check(t, r.tok)
		}
	}()
	for i := range runs {
		select {
		case <-ready[i]:
		case <-time.After(120 * time.Second):
			t.Fatalf("run %d did not say ready within 120 s", i)
		}
	}
	// Record the long runs' processes while nothing can have cleaned them up yet.
	for i, r := range runs {
		if r.long {
			require.NoError(t, r.record(sleepers+1), "run %d", i)
		}
	}
	for i, r := range runs {
		if !r.long {
			<-done[i]
		}
	}
	for i, r := range runs {
		if !r.long {
			require.NoError(t, r.err, "short run %d", i)
			require.NotNil(t, r.totals, "short run %d ended without totals (exit %d)", i, r.exit)
			assert.Equal(t, sleepers+1, r.totals.Cleanup.Signalled, "short run %d signalled other than its own processes", i)
			continue
		}
		for _, id := range r.procs {
			now, state, ok := readProcID(id.pid)
			assert.True(t, ok && now == id, "long run %d: process %d was killed while another run cleaned up", i, id.pid)
			assert.NotContains(t, "TtZX", string(state), "long run %d: process %d is in state %c", i, id.pid, state)
		}
	}
	require.NoError(t, os.WriteFile(release, nil, 0o644))
	for i, r := range runs {
		if !r.long {
			continue
		}
		select {
		case <-done[i]:
		case <-time.After(120 * time.Second):
			t.Fatalf("long run %d did not return within 120 s of its release", i)
		}
		require.NoError(t, r.err, "long run %d", i)
		require.NotNil(t, r.totals, "long run %d ended without totals (exit %d)", i, r.exit)
		assert.Equal(t, 0, r.exit, "long run %d", i)
		assert.Equal(t, sleepers+1, r.totals.Cleanup.Signalled, "long run %d", i)
		for _, id := range r.procs {
			now, _, ok := readProcID(id.pid)
			assert.True(t, !ok || now != id, "long run %d: process %d outlived its run", i, id.pid)
		}
	}
}
