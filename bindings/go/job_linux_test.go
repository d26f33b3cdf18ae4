package shellsup

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/internal/proctest"
)

// python is Debian's interpreter: the one on PATH may be a pyenv shim,
// which needs the caller's HOME.
const python = "/usr/bin/python3"

// jobWait bounds every wait of these tests: a loaded machine is slow, and
// none of them measures time.
const jobWait = 60 * time.Second

func needPython(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(python); err != nil {
		t.Skipf("no %s: %v", python, err)
	}
}

// startJob starts req as a job that is killed (without grace) if the test
// leaves it running.
func startJob(t *testing.T, req Request) *Job {
	t.Helper()
	j, err := Start(context.Background(), req)
	require.NoError(t, err)
	t.Cleanup(func() {
		if j.Running() {
			_, _ = j.Kill(0) // the test failed before its own Kill
		}
		_ = j.Close() // the job's result was checked by the test
	})
	return j
}

// readAll reads the job's output until Done, as the job writes it.
func readAll(t *testing.T, j *Job) (stdout, stderr string, reads int) {
	t.Helper()
	var out, errs strings.Builder
	deadline := time.Now().Add(jobWait)
	for {
		o, err := j.Read()
		require.NoError(t, err)
		reads++
		out.WriteString(o.Stdout)
		errs.WriteString(o.Stderr)
		if o.Done {
			return out.String(), errs.String(), reads
		}
		require.True(t, time.Now().Before(deadline), "the job's output did not end within %v", jobWait)
		if !o.More {
			time.Sleep(5 * time.Millisecond) // poll the growing files
		}
	}
}

// TestJobHTTPServer: a real http.server as a job. WaitFor finds its line,
// then its port through shellsup's ports frame (the job's, not a
// stranger's), then its URL; a GET gets 200; Kill cleans up and nothing is
// left (newRequest's leak check).
func TestJobHTTPServer(t *testing.T) {
	needPython(t)
	req := newRequest(t, python+" -u -m http.server 0 --bind 127.0.0.1")
	req.Cwd = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(req.Cwd, "index.html"), []byte("hello from the job\n"), 0o600))
	j := startJob(t, req)
	assert.True(t, j.Running())
	assert.Greater(t, j.Pid(), 0)

	ctx, cancel := context.WithTimeout(context.Background(), jobWait)
	defer cancel()
	serving := regexp.MustCompile(`Serving HTTP on 127\.0\.0\.1 port (\d+)`)
	require.NoError(t, j.WaitFor(ctx, Ready{Pattern: serving}))
	o, err := j.Read()
	require.NoError(t, err)
	m := serving.FindStringSubmatch(o.Stdout)
	require.NotNil(t, m, "stdout: %q", o.Stdout)
	port, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)

	require.NoError(t, j.WaitFor(ctx, Ready{Port: port, URL: url}))
	ports, err := j.Ports(ctx)
	require.NoError(t, err)
	require.Contains(t, ports, Port{Proto: "tcp", Addr: "127.0.0.1", Port: port, Pid: ports[0].Pid}, "ports: %+v", ports)

	resp, err := http.Get(url)
	require.NoError(t, err)
	body := new(bytes.Buffer)
	_, err = body.ReadFrom(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "hello from the job\n", body.String())

	res, err := j.Kill(2 * time.Second)
	require.NoError(t, err)
	assert.False(t, j.Running())
	assert.True(t, res.Cancelled)
	assert.Equal(t, "request", res.CancelReason)
	assert.Equal(t, "cancel", res.Cleanup.Trigger)
	assert.GreaterOrEqual(t, res.Cleanup.Signalled, 1, "the server was signalled")
	assert.True(t, res.Cleanup.Clean(), "stragglers: %v", res.Cleanup.Stragglers)
	assert.Contains(t, res.Stderr, `"GET / HTTP/1.1" 200`, "the server logged the request")
	_, err = (&http.Client{Timeout: 5 * time.Second}).Get(url)
	assert.Error(t, err, "nothing listens on the port any more")
	res2, err := j.Wait(context.Background())
	require.NoError(t, err)
	assert.Equal(t, res, res2, "Wait after Kill returns the same result")
}

// TestJobReadEveryByteOnce: a job writing 5 MiB of random bytes (ill-formed
// UTF-8 among them) to stdout and 1 MiB to stderr in bursts. Reads made
// while it runs return every byte exactly once, in order, decoded as the
// capture decodes (checked against package decoder on the whole stream);
// the spill files equal the raw bytes; Result counts them.
func TestJobReadEveryByteOnce(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 11))
	rawOut, rawErr := randomBytes(rng, 5<<20), randomBytes(rng, 1<<20)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "out"), rawOut, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "err"), rawErr, 0o600))
	const bursts = 40
	cmd := fmt.Sprintf(`cd %q && for i in $(seq 0 %d); do dd if=out bs=%d skip=$i count=1 status=none; dd if=err bs=%d skip=$i count=1 status=none >&2; sleep 0.02; done`,
		dir, bursts, len(rawOut)/bursts, len(rawErr)/bursts)
	req := newRequest(t, cmd)
	spillDir := t.TempDir()
	req.Spill = spillDir
	j := startJob(t, req)

	stdout, stderr, reads := readAll(t, j)
	t.Logf("%d reads", reads)
	assert.Equal(t, decodeAll(rawOut), stdout, "stdout, read in pieces as it grew")
	assert.Equal(t, decodeAll(rawErr), stderr)

	res, err := j.Wait(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitCode)
	assert.EqualValues(t, len(rawOut), res.StdoutBytes)
	assert.EqualValues(t, len(rawErr), res.StderrBytes)
	require.NotNil(t, res.Spill)
	assert.False(t, res.Spill.Cut)
	assert.EqualValues(t, len(rawOut), res.Spill.StdoutWritten)
	assert.Equal(t, spillDir, filepath.Dir(res.Spill.Dir))
	gotOut, err := os.ReadFile(res.Spill.Stdout)
	require.NoError(t, err)
	gotErr, err := os.ReadFile(res.Spill.Stderr)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(rawOut, gotOut), "the stdout spill file equals the raw bytes")
	assert.True(t, bytes.Equal(rawErr, gotErr), "the stderr spill file equals the raw bytes")

	o, err := j.Read()
	require.NoError(t, err)
	assert.Equal(t, Output{Done: true}, o, "nothing more after Done")
}

// randomBytes is n bytes mixing ASCII lines, valid multi-byte text and
// ill-formed sequences, some of them cut by burst boundaries.
func randomBytes(rng *rand.Rand, n int) []byte {
	pieces := [][]byte{[]byte("line of text\n"), []byte("é€😀"), {0xE2, 0x82}, {0xF0, 0x9F}, {0xFF}, {0xC0, 0xAF}, {0xED, 0xA0, 0x80}}
	out := make([]byte, 0, n+16)
	for len(out) < n {
		if rng.IntN(4) == 0 {
			out = append(out, pieces[rng.IntN(len(pieces))]...)
		} else {
			out = append(out, byte(rng.IntN(256)))
		}
	}
	return out[:n]
}

func decodeAll(raw []byte) string {
	var d decoder.Decoder
	return string(d.Flush(d.Decode(nil, raw)))
}

// TestJobOwnSpillDirectoryRemoved: without Request.Spill the job's files
// live in a private directory (0700) that is gone once the job has ended;
// Read still returns all of the output.
func TestJobOwnSpillDirectoryRemoved(t *testing.T) {
	req := newRequest(t, `printf 'one\n'; sleep 0.2; printf 'two\n'; printf 'err\n' >&2`)
	j := startJob(t, req)
	st, err := os.Stat(j.ownDir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	res, err := j.Wait(context.Background())
	require.NoError(t, err)
	_, err = os.Stat(j.ownDir)
	assert.ErrorIs(t, err, os.ErrNotExist, "the private spill directory is removed")
	require.NotNil(t, res.Spill)
	stdout, stderr, _ := readAll(t, j)
	assert.Equal(t, "one\ntwo\n", stdout)
	assert.Equal(t, "err\n", stderr)
}

// TestJobSpillMaxCut: past Request.SpillMax the output is dropped, and
// Read and Result say so.
func TestJobSpillMaxCut(t *testing.T) {
	req := newRequest(t, `head -c 10000 /dev/zero | tr '\0' x`)
	req.Spill, req.SpillMax = t.TempDir(), 4096
	j := startJob(t, req)
	stdout, _, _ := readAll(t, j)
	assert.Equal(t, strings.Repeat("x", 4096), stdout)
	o, err := j.Read()
	require.NoError(t, err)
	assert.True(t, o.Cut)
	res, err := j.Wait(context.Background())
	require.NoError(t, err)
	require.NotNil(t, res.Spill)
	assert.True(t, res.Spill.Cut)
	assert.EqualValues(t, 10000-4096, res.Spill.StdoutDropped)
	assert.EqualValues(t, 10000, res.StdoutBytes)
}

// TestJobWaitForExitedFirst: a job that exits before it is ready makes
// WaitFor return at once with its exit code and output.
func TestJobWaitForExitedFirst(t *testing.T) {
	j := startJob(t, newRequest(t, `echo starting; echo 'port in use' >&2; exit 3`))
	ctx, cancel := context.WithTimeout(context.Background(), jobWait)
	defer cancel()
	err := j.WaitFor(ctx, Ready{Pattern: regexp.MustCompile(`listening`)})
	var exited *ExitedError
	require.ErrorAs(t, err, &exited)
	require.NoError(t, ctx.Err(), "WaitFor returned at the exit, not at its deadline")
	assert.Equal(t, 3, exited.Result.ExitCode)
	assert.Equal(t, "starting\n", exited.Result.Stdout)
	assert.Contains(t, err.Error(), "exit code 3")
	assert.Contains(t, err.Error(), `port in use`)
	assert.False(t, j.Running())

	err = j.WaitFor(ctx, Ready{Port: 8000})
	require.ErrorAs(t, err, &exited, "and for a port")
	require.NoError(t, ctx.Err())
}

// TestJobWaitForPatternThenExit: a pattern that appeared before the job
// exited counts: the job was ready.
func TestJobWaitForPatternThenExit(t *testing.T) {
	j := startJob(t, newRequest(t, `echo ready >&2; exit 0`))
	_, err := j.Wait(context.Background())
	require.NoError(t, err)
	require.NoError(t, j.WaitFor(context.Background(), Ready{Pattern: regexp.MustCompile(`(?m)^ready$`)}))
}

// TestJobWaitForDeadline: WaitFor on a silent job gives up at its ctx's
// deadline, and the job goes on running until Kill.
func TestJobWaitForDeadline(t *testing.T) {
	j := startJob(t, newRequest(t, `sleep 300`))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := j.WaitFor(ctx, Ready{Pattern: regexp.MustCompile(`never`), Port: 1})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "still running")
	assert.True(t, j.Running())

	wctx, wcancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer wcancel()
	_, err = j.Wait(wctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.True(t, j.Running(), "a Wait that gave up leaves the job running")

	res, err := j.Kill(0)
	require.NoError(t, err)
	assert.True(t, res.Cancelled)
	assert.Equal(t, "SIGTERM", res.Signal)
}

// TestJobKillCutsTheGrace: Kill(0) on a TERM-ignorer whose job grace is
// 30 s SIGKILLs it without waiting out those 30 s.
func TestJobKillCutsTheGrace(t *testing.T) {
	req := newRequest(t, `trap '' TERM; echo ready; while :; do sleep 0.1; done`)
	req.Grace = new(30 * time.Second)
	j := startJob(t, req)
	ctx, cancel := context.WithTimeout(context.Background(), jobWait)
	defer cancel()
	require.NoError(t, j.WaitFor(ctx, Ready{Pattern: regexp.MustCompile(`ready`)}))
	res, err := j.Kill(0)
	require.NoError(t, err)
	assert.True(t, res.Cancelled)
	assert.Equal(t, "SIGKILL", res.Signal)
	assert.GreaterOrEqual(t, res.Cleanup.Killed, 1)
	assert.Less(t, res.Cleanup.Duration, 30*time.Second, "the grace was cut short")
}

// TestJobContextCancels: the ctx given to Start cancels the job.
func TestJobContextCancels(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := newRequest(t, `sleep 300 & setsid sleep 300 & wait`)
	req.Grace = new(time.Duration(0))
	j, err := Start(ctx, req)
	require.NoError(t, err)
	defer j.Close()
	cancel()
	wctx, wcancel := context.WithTimeout(context.Background(), jobWait)
	defer wcancel()
	res, err := j.Wait(wctx)
	require.NoError(t, err)
	assert.True(t, res.Cancelled)
	assert.Equal(t, "request", res.CancelReason)
}

// TestJobLifetime: a job whose lifetime runs out is stopped as by a
// timeout.
func TestJobLifetime(t *testing.T) {
	req := newRequest(t, `sleep 300`)
	req.Lifetime = time.Second
	j := startJob(t, req)
	wctx, wcancel := context.WithTimeout(context.Background(), jobWait)
	defer wcancel()
	res, err := j.Wait(wctx)
	require.NoError(t, err)
	assert.True(t, res.TimedOut)
	assert.Equal(t, "timeout", res.Cleanup.Trigger)
}

// TestJobStartFailures: a run that cannot happen is Start's error, and no
// Job is returned.
func TestJobStartFailures(t *testing.T) {
	frame := filepath.Join(t.TempDir(), "error.bin")
	require.NoError(t, os.WriteFile(frame, goldenWire(t, "error-containment"), 0o644))
	req := newRequest(t, "true")
	req.Binary = writeScript(t, "cat "+frame+"; exit 125")
	j, err := Start(context.Background(), req)
	assert.Nil(t, j)
	e := requireCategory(t, err, CategoryContainmentUnavailable)
	assert.Equal(t, "/proc is not a mounted procfs", e.Message)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Start(ctx, newRequest(t, "true"))
	require.ErrorIs(t, err, context.Canceled)
}

// TestJobRefusesBadInput: every bad value is refused, quoted, before
// anything is spawned (the binary would leave a mark).
func TestJobRefusesBadInput(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "spawned")
	bin := writeScript(t, "touch "+mark+"; exit 125")
	worldWritable := t.TempDir()
	require.NoError(t, os.Chmod(worldWritable, 0o777))
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(t.TempDir(), link))
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	for _, tc := range []struct {
		name string
		edit func(*Request)
		want string
	}{
		// The lifetime's rule and words are request's, shellsup's own
		// (once "at most 168h0m0s" here): the binary's message won.
		{"lifetime negative", func(r *Request) { r.Lifetime = -time.Second }, "lifetime must be greater than 0 and at most 604800 seconds (7 days) (got -1s)"},
		{"lifetime over 7 days", func(r *Request) { r.Lifetime = MaxLifetime + time.Second }, "(got 168h0m1s)"},
		{"lifetime and timeout", func(r *Request) { r.Lifetime, r.Timeout = time.Hour, time.Minute }, "lifetime 1h0m0s and timeout 1m0s exclude each other"},
		{"spill missing", func(r *Request) { r.Spill = "/nonexistent/spill" }, `spill directory "/nonexistent/spill" does not exist`},
		{"spill a file", func(r *Request) { r.Spill = file }, "is not a directory"},
		{"spill a symlink", func(r *Request) { r.Spill = link }, "is a symbolic link"},
		{"spill world-writable", func(r *Request) { r.Spill = worldWritable }, "writable by group or others (mode 0777)"},
		{"spill max negative", func(r *Request) { r.Spill, r.SpillMax = t.TempDir(), -1 }, "spill max must be at least 0 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := Request{Command: "true", Binary: bin}
			tc.edit(&req)
			j, err := Start(context.Background(), req)
			assert.Nil(t, j)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, CategoryValidation, e.Category)
			assert.Contains(t, e.Message, tc.want)
			_, err = Run(context.Background(), req)
			require.ErrorAs(t, err, &e, "Run refuses it too")
			assert.Equal(t, CategoryValidation, e.Category)
		})
	}
	_, err := Run(context.Background(), Request{Command: "true", Binary: bin, SpillMax: 100})
	var e *Error
	require.ErrorAs(t, err, &e, "Run: a spill limit without a spill directory")
	assert.Equal(t, CategoryValidation, e.Category)
	assert.Contains(t, e.Message, "spill max 100 needs a spill directory")
	_, err = os.Stat(mark)
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing was spawned")
}

// TestJobSpillMaxOwnDirectory: Start applies SpillMax to the directory it
// makes.
func TestJobSpillMaxOwnDirectory(t *testing.T) {
	req := newRequest(t, `head -c 3000 /dev/zero | tr '\0' y`)
	req.SpillMax = 1000
	j := startJob(t, req)
	stdout, _, _ := readAll(t, j)
	assert.Equal(t, strings.Repeat("y", 1000), stdout)
	res, err := j.Wait(context.Background())
	require.NoError(t, err)
	require.NotNil(t, res.Spill)
	assert.EqualValues(t, 2000, res.Spill.StdoutDropped)
}

// TestJobRefusesBadReady: WaitFor and Kill refuse bad values with the value
// quoted, and the job goes on.
func TestJobRefusesBadReady(t *testing.T) {
	j := startJob(t, newRequest(t, "sleep 300"))
	for _, tc := range []struct {
		ready Ready
		want  string
	}{
		{Ready{}, "nothing to wait for"},
		{Ready{Port: -1}, "port must be between 1 and 65535 (got -1)"},
		{Ready{Port: 65536}, "(got 65536)"},
		{Ready{URL: "localhost:8000"}, `url must be an absolute http or https URL (got "localhost:8000")`},
		{Ready{URL: "ftp://host/"}, `(got "ftp://host/")`},
	} {
		err := j.WaitFor(context.Background(), tc.ready)
		var e *Error
		require.ErrorAs(t, err, &e, "%+v", tc.ready)
		assert.Equal(t, CategoryValidation, e.Category)
		assert.Contains(t, e.Message, tc.want)
	}
	_, err := j.Kill(-time.Second)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Contains(t, e.Message, "(got -1s)")
	assert.True(t, j.Running(), "a refused Kill leaves the job running")
}

// TestRunWithSpill: Run keeps the raw bytes in spill files too.
func TestRunWithSpill(t *testing.T) {
	req := newRequest(t, `printf 'a\xffb'; printf 'e' >&2`)
	req.Spill = t.TempDir()
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	require.NotNil(t, res.Spill)
	got, err := os.ReadFile(res.Spill.Stdout)
	require.NoError(t, err)
	assert.Equal(t, []byte("a\xffb"), got)
	assert.Equal(t, "a\uFFFDb", res.Stdout)
	assert.EqualValues(t, 3, res.StdoutBytes)
	assert.EqualValues(t, 1, res.StderrBytes)
	assert.Equal(t, proctest.Containment(false), res.Cleanup.Tier)
}

// TestJobReadManyAtOnce: concurrent Reads, WaitFors and Ports calls on one
// job are safe (the race detector watches) and together still return each
// byte once.
func TestJobReadManyAtOnce(t *testing.T) {
	j := startJob(t, newRequest(t, `for i in $(seq 1 2000); do echo "line $i"; done; sleep 0.5`))
	parts := make(chan string, 1<<16)
	errs := make(chan error, 8)
	for range 4 {
		go func() {
			for {
				o, err := j.Read()
				if err != nil {
					errs <- err
					return
				}
				parts <- o.Stdout
				if o.Done {
					errs <- nil
					return
				}
				time.Sleep(time.Millisecond)
			}
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), jobWait)
	defer cancel()
	require.NoError(t, j.WaitFor(ctx, Ready{Pattern: regexp.MustCompile(`line 2000\n`)}))
	_, err := j.Ports(ctx)
	if err != nil {
		require.ErrorIs(t, err, errEnded, "only because the job ended first")
	}
	// The first reader to see Done ends; the others see Done too on their next Read.
	for range 4 {
		select {
		case err := <-errs:
			require.NoError(t, err)
		case <-ctx.Done():
			t.Fatal("readers did not finish")
		}
	}
	close(parts)
	var total int
	for p := range parts {
		total += len(p)
	}
	want := 0
	for i := 1; i <= 2000; i++ {
		want += len(fmt.Sprintf("line %d\n", i))
	}
	assert.Equal(t, want, total, "every byte once over all readers")
}

// TestJobClose: Close kills a running job and closes its files; Read then
// fails with ErrClosed; a second Close changes nothing.
func TestJobClose(t *testing.T) {
	req := newRequest(t, `echo started; sleep 300`)
	req.Grace = new(time.Duration(0))
	j, err := Start(context.Background(), req)
	require.NoError(t, err)
	fds := len(fdList(t))
	require.NoError(t, j.Close())
	assert.False(t, j.Running())
	res, err := j.Wait(context.Background())
	require.NoError(t, err)
	assert.True(t, res.Cancelled)
	_, err = j.Read()
	require.ErrorIs(t, err, ErrClosed)
	err = j.WaitFor(context.Background(), Ready{Pattern: regexp.MustCompile(`started`)})
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, j.Close())
	assert.Less(t, len(fdList(t)), fds, "the spill files (and shellsup's pipes) are closed")
}

// TestJobNoGoroutineOrFdLeak: 20 jobs, each read, waited for, asked for
// its ports and closed, leave no goroutine, no open fd and no process.
func TestJobNoGoroutineOrFdLeak(t *testing.T) {
	req := newRequest(t, `echo up; sleep 300`)
	req.Grace = new(time.Duration(0))
	use := func() {
		j, err := Start(context.Background(), req)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), jobWait)
		defer cancel()
		require.NoError(t, j.WaitFor(ctx, Ready{Pattern: regexp.MustCompile(`up`)}))
		_, err = j.Read()
		require.NoError(t, err)
		_, err = j.Ports(ctx)
		require.NoError(t, err)
		require.NoError(t, j.Close())
	}
	use() // warm up: the runtime's own lazily started goroutines and fds
	goroutines, fds := settle(t, -1, -1)
	for range 20 {
		use()
	}
	gotG, gotFds := settle(t, goroutines, fds)
	assert.Equal(t, goroutines, gotG, "goroutines before and after 20 jobs\n%s", stacks())
	assert.Equal(t, fds, gotFds, "open fds before and after 20 jobs: %v", fdList(t))
}

// TestJobWaitForPortNotInAnotherNetns: the job listens on a stranger's
// port inside a network namespace of its own (unshare -rn), and on a
// second port in shellsup's: WaitFor on the stranger's port times out (a
// connection to it here reaches the stranger), WaitFor on the second port
// returns, and Ports names only the second.
func TestJobWaitForPortNotInAnotherNetns(t *testing.T) {
	if err := exec.Command("unshare", "-rn", "true").Run(); err != nil {
		t.Skipf("unshare -rn is not available here: %v", err)
	}
	stranger, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer stranger.Close()
	port := stranger.Addr().(*net.TCPAddr).Port
	free, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	own := free.Addr().(*net.TCPAddr).Port
	require.NoError(t, free.Close())
	listen := `import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(); time.sleep(60)`
	j := startJob(t, newRequest(t, fmt.Sprintf(`timeout 60 unshare -rn /usr/bin/python3 -c '%[1]s' 0.0.0.0 %[2]d &
timeout 60 /usr/bin/python3 -c '%[1]s' 127.0.0.1 %[3]d & wait`, listen, port, own)))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, j.WaitFor(ctx, Ready{Port: own}), "the job's listener in shellsup's netns")
	short, cancelShort := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancelShort()
	err = j.WaitFor(short, Ready{Port: port})
	require.ErrorIs(t, err, context.DeadlineExceeded, "the job's listener on %d is in another netns", port)
	ports, err := j.Ports(context.Background())
	require.NoError(t, err)
	require.Len(t, ports, 1, "%+v", ports)
	assert.Equal(t, own, ports[0].Port)
	assert.True(t, j.Running())
}

// TestJobWaitForPortIgnoresAStranger: a port someone else listens on does
// not make the job ready, though it accepts connections: shellsup's ports
// answer names only the job's own sockets.
func TestJobWaitForPortIgnoresAStranger(t *testing.T) {
	stranger, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer stranger.Close()
	port := stranger.Addr().(*net.TCPAddr).Port
	j := startJob(t, newRequest(t, `sleep 300`))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err = j.WaitFor(ctx, Ready{Port: port})
	require.ErrorIs(t, err, context.DeadlineExceeded, "the stranger's port is not the job's")
	assert.Contains(t, err.Error(), fmt.Sprintf("port %d", port))
	ports, err := j.Ports(context.Background())
	require.NoError(t, err)
	assert.Empty(t, ports)
	assert.True(t, j.Running())
}
