package shellsup

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/shellsup/shellsup/protocol"
)

// process is one running shellsup, owned by one Run call.
type process struct {
	cmd     *exec.Cmd
	control *os.File // the write end of shellsup's stdin: the control channel
	frames  *os.File // the read end of shellsup's stdout
	stderr  *headBuffer
	grace   time.Duration
	slack   time.Duration // watchdogSlack when the run started
	exited  chan struct{} // closed once cmd.Wait has returned

	// watch, if set (by Start), sees every frame of the run in order.
	watch func(protocol.Frame)

	mu        sync.Mutex
	cancelled bool // the cancel frame was sent
	done      bool // Run is finishing: nothing more goes to the control channel
	watchdog  *time.Timer
	deadline  time.Time // when the watchdog fires
	killedWhy string    // set when Run killed shellsup
}

// start spawns shellsup with its control pipe, frame pipe and stderr
// buffer, from a goroutine locked to its OS thread (see own), and arms the
// watchdog.
func start(bin string, cfg config) (*process, error) {
	ctrlR, ctrlW, err := os.Pipe()
	if err != nil {
		return nil, newError(CategoryInternal, fmt.Sprintf("creating the control pipe: %v", err), err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		ctrlR.Close()
		ctrlW.Close()
		return nil, newError(CategoryInternal, fmt.Sprintf("creating the frame pipe: %v", err), err)
	}
	p := &process{control: ctrlW, frames: outR, stderr: &headBuffer{max: stderrKeep},
		grace: cfg.graceOrDefault(), slack: watchdogSlack, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, cfg.args()...)
	p.cmd.Env = supervisorEnv(bin, cfg.env)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = ctrlR, outW, p.stderr
	p.cmd.SysProcAttr = sysProcAttr()
	p.cmd.WaitDelay = stderrWait

	started := make(chan error, 1)
	go p.own(started)
	err = <-started
	ctrlR.Close() // shellsup has its own copies of these ends now
	outW.Close()
	if err != nil {
		ctrlW.Close()
		outR.Close()
		return nil, startError(bin, cfg, err)
	}
	p.arm(cfg.timeout+p.grace+p.slack, fmt.Sprintf("no totals within the timeout (%v) plus grace (%v) plus %v", cfg.timeout, p.grace, p.slack))
	return p, nil
}

// own starts shellsup and waits for it, on one locked OS thread. The
// parent-death signal is tied to the thread that forked, not to the
// process (golang/go#27505): if that thread exited while shellsup runs,
// shellsup would get SIGTERM and cancel a healthy run. A locked thread is
// never reused by another goroutine, and it lives until UnlockOSThread,
// which comes only after shellsup has exited.
func (p *process) own(started chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := p.cmd.Start(); err != nil {
		started <- err
		return
	}
	started <- nil
	// The exit status is read from cmd.ProcessState; an ErrWaitDelay (the
	// stderr pipe held open after exit) changes nothing for Run.
	_ = p.cmd.Wait()
	close(p.exited)
}

// supervise reads the frames of the run, cancelling it when ctx is done,
// then waits for shellsup to exit and turns what it said into the result.
func (p *process) supervise(ctx context.Context, progress func(stream, text string) error) (res Result, err error) {
	defer p.release() // if progress panicked: shellsup sees EOF and cleans up
	stop := context.AfterFunc(ctx, p.cancel)
	out, readErr := readRun(p.frames, progress, p.cancel, p.watching()...)
	stop()
	p.finish(out.ended())
	switch {
	case readErr != nil:
		return Result{}, p.brokeOff(out, readErr)
	case out.failure != nil:
		return Result{}, errorOf(out.failure)
	}
	res = resultOf(out.totals)
	if out.callbackErr != nil {
		return res, fmt.Errorf("shellsup: progress callback: %w", out.callbackErr)
	}
	return res, nil
}

// cancel sends the cancel frame, once, and shortens the watchdog to the
// grace plus slack.
func (p *process) cancel() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancelled || p.done {
		return
	}
	p.cancelled = true
	// A failed write means shellsup closed its stdin or exited; the frame
	// stream says what happened.
	_ = protocol.NewEncoder(p.control).Encode(&protocol.Cancel{})
	p.armLocked(p.grace+p.slack, fmt.Sprintf("no totals within the grace (%v) plus %v of the cancel", p.grace, p.slack))
}

// arm sets the watchdog to kill shellsup after d, unless it is set to fire
// sooner already.
func (p *process) arm(d time.Duration, why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armLocked(d, why)
}

func (p *process) armLocked(d time.Duration, why string) {
	at := time.Now().Add(d)
	if p.watchdog != nil && !at.Before(p.deadline) {
		return
	}
	if p.watchdog != nil {
		p.watchdog.Stop()
	}
	p.deadline = at
	p.watchdog = time.AfterFunc(d, func() { p.kill(why) })
}

// kill SIGKILLs shellsup, recording why. Its frame stream then ends.
func (p *process) kill(why string) {
	p.mu.Lock()
	if p.killedWhy == "" {
		p.killedWhy = why
	}
	p.mu.Unlock()
	// Kill fails only if shellsup has exited and been reaped already; the
	// pidfd behind os.Process makes it safe against pid reuse.
	_ = p.cmd.Process.Kill()
}

// finish ends the conversation and waits for shellsup to exit. After its
// last frame shellsup is exiting anyway. Otherwise it is asked to cancel,
// and the frame pipe is closed so that its next write fails (EPIPE, which
// shellsup treats as parent-gone) instead of blocking on a pipe nobody
// reads; if it still has not exited within the grace plus slack, it is
// killed.
func (p *process) finish(ended bool) {
	bound := exitWait
	if !ended {
		p.cancel()
		bound = p.grace + p.slack
	}
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
	p.release()
	select {
	case <-p.exited:
	case <-time.After(bound):
		p.kill(fmt.Sprintf("still running %v after the end of its frames", bound))
		<-p.exited
	}
	p.mu.Lock()
	p.watchdog.Stop()
	p.mu.Unlock()
}

// release closes Run's ends of the pipes. Closing the control channel is
// EOF for shellsup: if it is still running, it cancels (parent-gone) and
// cleans up. The spawning goroutine reaps it whatever happens here.
func (p *process) release() {
	// Both may be closed already; a second Close only returns os.ErrClosed.
	_ = p.control.Close()
	_ = p.frames.Close()
}

// brokeOff describes a frame stream that broke off before its end.
func (p *process) brokeOff(out outcome, readErr error) *Error {
	var b strings.Builder
	fmt.Fprintf(&b, "reading the frames of shellsup (pid %d): %v", p.cmd.Process.Pid, readErr)
	p.mu.Lock()
	why := p.killedWhy
	p.mu.Unlock()
	if why != "" {
		fmt.Fprintf(&b, "; killed it: %s", why)
	}
	fmt.Fprintf(&b, "; shellsup %s", p.cmd.ProcessState)
	if s := strings.TrimSpace(p.stderr.String()); s != "" {
		fmt.Fprintf(&b, "; its stderr: %q", s)
	}
	if out.callbackErr != nil {
		fmt.Fprintf(&b, "; the progress callback had failed: %v", out.callbackErr)
	}
	return newError(CategoryProtocol, b.String(), readErr)
}

// headBuffer keeps the first max bytes written to it and counts the rest.
type headBuffer struct {
	max     int
	mu      sync.Mutex
	buf     []byte
	dropped int
}

func (h *headBuffer) Write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	keep := min(len(b), h.max-len(h.buf))
	h.buf = append(h.buf, b[:keep]...)
	h.dropped += len(b) - keep
	return len(b), nil
}

func (h *headBuffer) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dropped > 0 {
		return fmt.Sprintf("%s... (%d more bytes)", h.buf, h.dropped)
	}
	return string(h.buf)
}
