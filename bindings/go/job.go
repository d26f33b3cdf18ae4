package shellsup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/request"
)

// ReadMax bounds what one Job.Read returns: at most this many raw bytes of
// each stream (1 MiB). Output.More says that more is waiting.
const ReadMax = 1 << 20

// Job is a run the caller does not wait for: a dev server, a watcher, a
// database for the tests. It is a shellsup run like any other — the same
// containment, the same cleanup, the same Result — with a lifetime instead
// of a call timeout, and spill files that keep every byte of its output.
//
// A Job dies with its owner: when the ctx given to Start is done, when Kill
// is called, when its lifetime runs out, and when the calling process dies
// (shellsup sees EOF on its control channel and gets the parent-death signal,
// as for Run). Its methods may be called from several goroutines at once.
type Job struct {
	p      *process
	cfg    config
	ownDir string // the spill directory Start made (removed once the job has ended), or ""

	started chan struct{}   // closed once the start frame arrived
	start   *protocol.Start // set before started is closed
	files   [2]*os.File     // the spill files (stdout, stderr), opened at the start frame
	openErr error           // why they could not be opened

	done chan struct{} // closed once the job's report is in
	res  Result
	err  error

	noticed    chan struct{} // closed at the timeout or cancel frame: the cleanup begins
	noticeOnce sync.Once

	// Ports queries: shellsup answers each, in order, and an answer does
	// not name its query, so the n-th answer is the n-th query's; a late
	// answer (its caller gave up) is never taken for a later query's.
	portsMu      sync.Mutex    // one ports query at a time
	portsAsked   int           // queries sent (under portsMu)
	portsSeen    chan struct{} // signalled when an answer arrives
	answersMu    sync.Mutex
	portsAnswers int             // answers received (under answersMu)
	portsLast    *protocol.Ports // the latest of them

	readMu sync.Mutex
	cursor [2]spillCursor // Read's position in each spill file

	filesMu sync.RWMutex // readers of files; Close takes it to close them
	closed  bool

	in jobInput // Write, Expect, Waiting (interactive.go)
}

// Output is what one Job.Read returns: the job's output since the previous
// Read, decoded to UTF-8 as the capture is (an ill-formed sequence becomes
// U+FFFD; a sequence cut by the end of what has been written waits for the
// next Read). Every byte the job wrote (up to Request.SpillMax per
// stream) is returned exactly once, in order, across Reads.
type Output struct {
	Stdout, Stderr string
	// More is set when more output is waiting than this Read returned (it
	// returns at most ReadMax bytes of each stream): Read again.
	More bool
	// Cut is set once a spill file has reached its limit
	// (Request.SpillMax): output past it was counted and dropped.
	Cut bool
	// Done is set when the job has ended and this Read returned the last
	// of its output.
	Done bool
}

// Port is a socket the job's processes listen on, as shellsup found it in
// its own network namespace's /proc/net (tcp, tcp6, udp, udp6) matched to
// their file descriptors: a listener in a namespace of the job's own
// (unshare -n) is not reachable at the port, and is not reported.
type Port struct {
	Proto string // "tcp", "tcp6", "udp" or "udp6"
	Addr  string // the local address, e.g. "127.0.0.1" or "::"
	Port  int
	Pid   int // a process of the job holding the socket
}

// Start starts req.Command as a job and returns once it is running (its
// start frame has arrived), or with the error that kept it from running.
//
// req is checked as for Run; in addition, a zero Lifetime with a zero
// Timeout means DefaultLifetime (1 h), and a job always has spill files:
// in req.Spill, or in a private directory Start makes (0700, under
// os.TempDir) and removes once the job has ended. If ctx is done already,
// nothing is spawned. Once Start has returned, ctx being done cancels the
// job: shellsup is sent the cancel frame and cleans up, as Kill with the
// job's own grace. Request.Progress, if set, is called from a goroutine of
// the job.
func Start(ctx context.Context, req Request) (*Job, error) {
	if req.Lifetime == 0 && req.Timeout == 0 {
		req.Lifetime = DefaultLifetime
	}
	cfg, err := req.validate()
	if err != nil {
		return nil, err
	}
	if err := platformCheck(); err != nil {
		return nil, err
	}
	bin, err := resolveBinary(cfg.binary)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("shellsup: job not started: %w", err)
	}
	j := &Job{started: make(chan struct{}), done: make(chan struct{}), noticed: make(chan struct{}),
		portsSeen: make(chan struct{}, 1)}
	if err := j.spawn(ctx, bin, cfg); err != nil {
		return nil, err
	}
	if err := j.awaitStart(); err != nil {
		return nil, err
	}
	return j, nil
}

// spawn makes the job's own spill directory if it needs one, starts
// shellsup, and reads its frames from a goroutine of the job.
func (j *Job) spawn(ctx context.Context, bin string, cfg config) error {
	if cfg.spill == "" {
		dir, err := os.MkdirTemp("", "shellsup-job-")
		if err != nil {
			return newError(CategoryInternal, fmt.Sprintf("making a spill directory for the job: %v", err), err)
		}
		cfg.spill, j.ownDir = dir, dir
	}
	j.cfg = cfg
	p, err := start(bin, cfg)
	if err != nil {
		j.removeOwnDir()
		return err
	}
	p.watch = j.watch // before the frames are read
	j.p = p
	go j.supervise(ctx)
	return nil
}

// awaitStart waits for the start frame, or for the end of a run that
// could not start, and returns that run's error.
func (j *Job) awaitStart() error {
	select {
	case <-j.started:
		return nil
	case <-j.done:
	}
	select {
	case <-j.started: // it started, and ended already
		return nil
	default:
	}
	if j.err == nil { // totals without a start frame: readRun refuses that
		return newError(CategoryProtocol, "shellsup reported no start frame", nil)
	}
	return j.err
}

// supervise reads the job's frames until its report, as Run does.
func (j *Job) supervise(ctx context.Context) {
	res, err := j.p.supervise(ctx, j.cfg.progress)
	j.res, j.err = res, err
	j.removeOwnDir()
	close(j.done)
}

// watch sees every frame of the job, from the goroutine reading them.
func (j *Job) watch(f protocol.Frame) {
	switch f := f.(type) {
	case *protocol.Start:
		j.start = f
		j.files, j.openErr = openSpill(f.Spill)
		close(j.started)
	case *protocol.Timeout, *protocol.Cancel, *protocol.Idle:
		j.noticeOnce.Do(func() { close(j.noticed) })
	case *protocol.Waiting:
		j.sawWaiting(f)
	case *protocol.Taken:
		j.sawTaken(f)
	case *protocol.Ports:
		j.answersMu.Lock()
		j.portsAnswers++
		j.portsLast = f
		j.answersMu.Unlock()
		select {
		case j.portsSeen <- struct{}{}:
		default: // a signal is pending already
		}
	}
}

// removeOwnDir removes the spill directory Start made. The files stay
// readable through the descriptors the job opened.
func (j *Job) removeOwnDir() {
	if j.ownDir != "" {
		_ = os.RemoveAll(j.ownDir) // in os.TempDir: at worst it is left there
	}
}

// Pid is the process id of the job's shellsup. Signalling it SIGTERM
// cancels the job (CancelReason "signal") like Kill.
func (j *Job) Pid() int { return j.start.Pid }

// Running reports whether the job has not ended yet: its report has not
// arrived.
func (j *Job) Running() bool {
	select {
	case <-j.done:
		return false
	default:
		return true
	}
}

// Wait waits for the job to end and returns its Result, as Run would have.
// If ctx is done first, Wait returns an error wrapping ctx.Err() and the
// job goes on running.
func (j *Job) Wait(ctx context.Context) (Result, error) {
	select {
	case <-j.done:
		return j.res, j.err
	case <-ctx.Done():
		select {
		case <-j.done:
			return j.res, j.err
		default:
		}
		return Result{}, fmt.Errorf("shellsup: waiting for the job (pid %d): %w; it is still running", j.Pid(), ctx.Err())
	}
}

// Kill stops the job and returns its Result once shellsup has cleaned up:
// it sends the cancel frame (CancelReason "request"), so the tree gets
// SIGTERM, then SIGKILL after at most grace. The job's own grace
// (Request.Grace, default 2 s) is the longest: a larger grace changes
// nothing, a smaller one cuts it short. grace must be between 0 and 60 s;
// a bad one is refused with a validation *Error and the job goes on. A job
// that has ended already just returns its Result.
func (j *Job) Kill(grace time.Duration) (Result, error) {
	if err := request.ValidateGrace(grace.Seconds(), grace.String()); err != nil {
		return Result{}, invalid(err)
	}
	j.p.cancel()
	if grace < j.p.grace {
		j.hurry(grace)
	}
	<-j.done // the watchdog bounds it: grace plus slack after the cancel
	return j.res, j.err
}

// hurry ends the cleanup's grace after grace: once the cleanup has begun
// (the cancel or timeout frame), a SIGTERM to shellsup makes it SIGKILL
// what is left at once.
func (j *Job) hurry(grace time.Duration) {
	select {
	case <-j.noticed:
	case <-j.done:
		return
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-t.C:
		// Through the pidfd: it cannot reach another process.
		_ = j.p.cmd.Process.Signal(syscall.SIGTERM) // fails only once shellsup has exited
	case <-j.done:
	}
}

// Read returns the output the job wrote since the previous Read, from its
// spill files: at most ReadMax bytes of each stream. It does not wait: with
// nothing new, the texts are empty. After the job has ended, Read goes on
// returning what is left until Output.Done.
func (j *Job) Read() (Output, error) {
	j.readMu.Lock()
	defer j.readMu.Unlock()
	j.filesMu.RLock()
	defer j.filesMu.RUnlock()
	if err := j.filesErr(); err != nil {
		return Output{}, err
	}
	ended := !j.Running() // before reading: then the files are complete
	var o Output
	texts := [2]*string{&o.Stdout, &o.Stderr}
	for i := range j.cursor {
		text, more, size, err := j.cursor[i].next(j.files[i], ReadMax, ended)
		if err != nil {
			return Output{}, newError(CategoryInternal, fmt.Sprintf("reading the job's %s spill file: %v", [2]string{Stdout, Stderr}[i], err), err)
		}
		*texts[i] = text
		o.More = o.More || more
		o.Cut = o.Cut || size >= j.spillMax()
	}
	if ended {
		o.Cut = o.Cut || (j.res.Spill != nil && j.res.Spill.Cut)
		o.Done = !o.More
	}
	return o, nil
}

// filesErr says why the spill files cannot be read, if they cannot: they
// could not be opened, or Close closed them. The caller holds filesMu.
func (j *Job) filesErr() error {
	switch {
	case j.openErr != nil:
		return newError(CategoryInternal, j.openErr.Error(), j.openErr)
	case j.closed:
		return ErrClosed
	}
	return nil
}

// ErrClosed is what Read and WaitFor (for a pattern) return after Close.
var ErrClosed = errors.New("shellsup: the job is closed")

// Close kills the job if it is still running (as Kill with the job's own
// grace) and closes its spill files; Read and a WaitFor for a pattern fail
// afterwards. Call it (defer job.Close()) when done with a job: until
// then, or until the Job is garbage, its two files stay open. Close
// returns the error of the job's end, like Wait, and may be called more
// than once.
func (j *Job) Close() error {
	_, err := j.Kill(j.p.grace)
	j.filesMu.Lock()
	defer j.filesMu.Unlock()
	if !j.closed {
		j.closed = true
		for _, f := range j.files {
			if f != nil {
				_ = f.Close() // read-only: nothing to lose
			}
		}
	}
	return err
}

// spillMax is the limit of each spill file.
func (j *Job) spillMax() int64 {
	if j.cfg.spillMax == 0 {
		return DefaultSpillMax
	}
	return j.cfg.spillMax
}

// spillCursor reads one spill file from where it left off.
type spillCursor struct {
	off int64
	dec decoder.Decoder // the capture's rule: each maximal ill-formed subpart is one U+FFFD, however the file is read
}

// next decodes up to max new bytes of f. With final (the job has ended,
// so f is complete), a sequence cut by the end of the file becomes U+FFFD.
// It returns the text, whether more bytes are waiting, and f's size.
func (c *spillCursor) next(f *os.File, max int, final bool) (string, bool, int64, error) {
	st, err := f.Stat()
	if err != nil {
		return "", false, 0, err
	}
	size := st.Size()
	buf := make([]byte, min(size-c.off, int64(max)))
	n, err := f.ReadAt(buf, c.off)
	if n < len(buf) {
		return "", false, size, fmt.Errorf("short read at byte %d: %w", c.off, err)
	}
	c.off += int64(n)
	text := c.dec.Decode(nil, buf)
	more := c.off < size
	if final && !more {
		text = c.dec.Flush(text)
	}
	return string(text), more, size, nil
}

// watching is the frame watcher for readRun: p.watch, if set.
func (p *process) watching() []func(protocol.Frame) {
	if p.watch == nil {
		return nil
	}
	return []func(protocol.Frame){p.watch}
}
