package shellsup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shellsup/shellsup/internal/procstat"
	"github.com/shellsup/shellsup/protocol"
)

// process is one running shellsup, owned by one Run call.
type process struct {
	cmd     *exec.Cmd
	control *os.File // Run's end of shellsup's stdin, a socket: the control channel
	frames  *os.File // Run's end of shellsup's stdout, a socket: the frame stream
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
	killedWhy string    // set when Run gave up waiting for shellsup (abandon)

	stateWhenAbandoned string // its /proc state letter then
	sigkilled          bool   // it did not exit after SIGCONT and SIGTERM
}

// start spawns shellsup with its control channel, frame stream and stderr
// buffer, from a goroutine locked to its OS thread (see own), and arms the
// watchdog. The control channel (shellsup's stdin) and the frame stream
// (its stdout) are each a socketpair, not a pipe: the command runs as the
// caller's user and may open /proc/<caller>/fd/N, which reopens a pipe in
// either direction (to write forged frames, or to read the cancel frames)
// but not a socket (ENXIO).
func start(bin string, cfg config) (*process, error) {
	ctrlW, ctrlR, err := socketPair("shellsup control")
	if err != nil {
		return nil, newError(CategoryInternal, fmt.Sprintf("creating the control channel: %v", err), err)
	}
	outR, outW, err := socketPair("shellsup frames")
	if err != nil {
		ctrlR.Close()
		ctrlW.Close()
		return nil, newError(CategoryInternal, fmt.Sprintf("creating the frame stream: %v", err), err)
	}
	p := &process{control: ctrlW, frames: outR, stderr: &headBuffer{max: stderrKeep},
		grace: cfg.graceOrDefault(), slack: watchdogSlack, exited: make(chan struct{})}
	p.cmd = supervisorCommand(context.Background(), bin, cfg.args()...)
	p.cmd.Env = supervisorEnv(bin, cfg.env)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = ctrlR, outW, p.stderr
	p.cmd.SysProcAttr = sysProcAttr()
	p.cmd.WaitDelay = stderrWait

	started := make(chan error, 1)
	holdUndumpable() // until shellsup has exited: see dumpable_linux.go
	go p.own(started)
	err = <-started
	ctrlR.Close() // shellsup has its own copies of these ends now
	outW.Close()
	if err != nil {
		ctrlW.Close()
		outR.Close()
		return nil, startError(bin, cfg, err)
	}
	d := cfg.deadline.Duration()
	p.arm(d+p.grace+p.slack, fmt.Sprintf("no totals within the %s (%v) plus grace (%v) plus %v", cfg.deadline.Kind, d, p.grace, p.slack))
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
	defer releaseUndumpable()
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
	case p.doubt(out) != "":
		return Result{}, p.unreported(out)
	case out.failure != nil:
		return Result{}, errorOf(out.failure)
	case p.abandoned():
		return Result{}, p.lateTotals(out)
	}
	res = resultOf(out.totals)
	if !res.Cleanup.Clean() {
		return res, incomplete(res, out.callbackErr)
	}
	if out.callbackErr != nil {
		return res, fmt.Errorf("shellsup: progress callback: %w", out.callbackErr)
	}
	return res, nil
}

// incomplete is the error of a run whose cleanup left processes running.
func incomplete(res Result, callbackErr error) *Error {
	c := res.Cleanup
	n := len(c.Stragglers) + c.StragglersOmitted
	var b strings.Builder
	fmt.Fprintf(&b, "the cleanup left %d process(es) running", n)
	for i, st := range c.Stragglers[:min(len(c.Stragglers), 5)] {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%spid %d (%s, state %s: %s)", sep, st.Pid, st.Comm, st.State, st.Reason)
	}
	if len(c.Stragglers) > 5 {
		b.WriteString(", ...")
	}
	fmt.Fprintf(&b, "; the command's own exit code was %s; Result.Cleanup lists them", exitText(res))
	if callbackErr != nil {
		fmt.Fprintf(&b, "; the progress callback had failed too: %v", callbackErr)
	}
	return newError(CategoryCleanupIncomplete, b.String(), callbackErr)
}

func exitText(res Result) string {
	if res.ExitCode < 0 {
		return "unknown"
	}
	return strconv.Itoa(res.ExitCode)
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
	p.watchdog = time.AfterFunc(d, func() { p.watchdogFired(why) })
}

// Bounds of abandoning shellsup.
const (
	// cleanupBudget is what shellsup needs beyond the grace to kill what
	// is left of its tree and report (its own kill budget plus a margin).
	cleanupBudget = 5 * time.Second
	// resumeEvery is how often an abandoned shellsup is sent SIGCONT
	// again, in case the command keeps stopping it.
	resumeEvery = 50 * time.Millisecond
)

// watchdogFired abandons shellsup unless its frames have ended already:
// finish then bounds the wait for its exit itself.
func (p *process) watchdogFired(why string) {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if !done {
		p.abandon(why)
	}
}

// abandon gives up waiting for shellsup, recording why — but not on its
// tree: SIGKILLing a stopped or stuck shellsup would leave everything the
// command started running. So shellsup is first resumed (SIGCONT, again
// every resumeEvery, in case the command stopped it and keeps doing so)
// and asked to cancel (SIGTERM), which makes it clean up and report as
// usual; only if it has not exited within its grace plus cleanupBudget is
// it SIGKILLed. Every signal goes through the pidfd behind os.Process, so
// none can reach a process that took a reaped shellsup's pid.
func (p *process) abandon(why string) {
	p.mu.Lock()
	first := p.killedWhy == ""
	if first {
		p.killedWhy = why
		p.stateWhenAbandoned = procState(p.cmd.Process.Pid)
	}
	p.mu.Unlock()
	if !first {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGCONT) // fails only once shellsup has exited
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	go p.resumeOrKill(p.grace + cleanupBudget)
}

// resumeOrKill keeps an abandoned shellsup running until it exits, and
// SIGKILLs it after bound.
func (p *process) resumeOrKill(bound time.Duration) {
	tick := time.NewTicker(resumeEvery)
	defer tick.Stop()
	deadline := time.After(bound)
	for {
		select {
		case <-p.exited:
			return
		case <-tick.C:
			_ = p.cmd.Process.Signal(syscall.SIGCONT)
		case <-deadline:
			p.mu.Lock()
			p.sigkilled = true
			p.mu.Unlock()
			_ = p.cmd.Process.Kill()
			return
		}
	}
}

// abandoned reports whether Run gave up waiting for shellsup.
func (p *process) abandoned() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killedWhy != ""
}

// procState is the state letter of /proc/PID/stat ("T" when stopped), or
// "" if it cannot be read.
func procState(pid int) string {
	st, err := procstat.Read("/proc", pid)
	if err != nil {
		return ""
	}
	return string(st.State)
}

// abandonment describes what Run did to a shellsup that failed to report,
// and what is known to be left of the run.
func (p *process) abandonment() string {
	p.mu.Lock()
	why, state, killed := p.killedWhy, p.stateWhenAbandoned, p.sigkilled
	p.mu.Unlock()
	if why == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "gave up on it: %s", why)
	if state == "T" || state == "t" {
		b.WriteString("; it was stopped (something sent it SIGSTOP)")
	}
	b.WriteString("; sent it SIGCONT and SIGTERM")
	if killed {
		fmt.Fprintf(&b, ", then SIGKILL after %v", p.grace+cleanupBudget)
	}
	return b.String()
}

// tierCgroupV1 is the containment word of v1 leaves without a v2 leaf.
const tierCgroupV1 = "cgroup-v1"

// leftover says what is known to be left of a run whose shellsup ended
// without totals: bash, if it is still alive, and what it started, which
// only shellsup could have cleaned up. A cgroup leaf is killed: the one
// the start frame named, or, without one (shellsup died before its start
// frame, or the tier is cgroup-v1, whose v1 leaves the start frame does
// not name), any that the sweep finds stale.
func (p *process) leftover(start *protocol.Start, readErr error) string {
	keepUndumpable() // what the command started may outlive it: see dumpable_linux.go
	if start == nil {
		if errors.Is(readErr, errEndedBeforeStart) {
			// It died before its start frame, by a signal, a crash or
			// Run's own SIGKILL: no leaf was named, and it did not clean
			// up. The sweep touches only leaves of shellsups that are gone.
			return "; no start frame arrived, so what it started is unknown; " + sweepLeaves(p.cmd.Args[0], p.cmd.Env)
		}
		return "; no start frame arrived, so what it started is unknown"
	}
	if start.Cgroup != "" {
		return "; " + killLeaf(p.cmd.Args[0], p.cmd.Env, start.Cgroup)
	}
	tiers := strings.Split(start.Containment, "+")
	if slices.Contains(tiers, tierCgroupV1) {
		// v1 leaves (limits only) under the v1 cgroups shellsup inherited
		// from this process: plain `shellsup sweep` sweeps those.
		return "; the cgroup-v1 tier's leaves are not named in the start frame; " + sweepLeaves(p.cmd.Args[0], p.cmd.Env)
	}
	if slices.Contains(tiers, "pidns") {
		return "; the command ran in a PID namespace, which the kernel kills when shellsup dies"
	}
	if st := procState(start.ChildPid); st != "" && st != "Z" && st != "X" {
		return fmt.Sprintf("; bash (pid %d) is still running (state %s): it and the processes it started may survive, as shellsup could not clean up", start.ChildPid, st)
	}
	return fmt.Sprintf("; bash (pid %d) is gone, but processes it started may survive", start.ChildPid)
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
		p.abandon(fmt.Sprintf("still running %v after the end of its frames", bound))
		<-p.exited // resumeOrKill ends it
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
	if why := p.abandonment(); why != "" {
		b.WriteString("; " + why)
	}
	fmt.Fprintf(&b, "; shellsup %s", p.cmd.ProcessState)
	// Without totals, or with frames after them (which no frame can be
	// trusted past), shellsup's cleanup is not confirmed.
	b.WriteString(p.leftover(out.start, readErr))
	if s := strings.TrimSpace(p.stderr.String()); s != "" {
		fmt.Fprintf(&b, "; its stderr: %q", s)
	}
	if out.callbackErr != nil {
		fmt.Fprintf(&b, "; the progress callback had failed: %v", out.callbackErr)
	}
	return newError(CategoryProtocol, b.String(), readErr)
}

// doubt says why the report that ended the frames — totals, or an error
// frame — does not count, or "" when it does: a report counts only when
// shellsup then exited with the status it promises (expectedExit). A
// shellsup killed by a signal after its totals (by the command, say, after
// it forged them), or exiting otherwise, did not stand behind them.
func (p *process) doubt(out outcome) string {
	if !out.ended() {
		return ""
	}
	lo, hi, promise := expectedExit(out.totals)
	st := p.cmd.ProcessState
	if st != nil && st.ExitCode() >= lo && st.ExitCode() <= hi {
		return ""
	}
	kind := "totals"
	if out.totals == nil {
		kind = "error"
	}
	ended := "did not exit"
	if st != nil {
		ended = "ended with " + st.String()
	}
	return fmt.Sprintf("its %s frame promises exit status %s, but shellsup %s: the frame may be forged, or shellsup did not stand behind it, so it does not count", kind, promise, ended)
}

// expectedExit is the range of exit statuses shellsup promises with totals
// t (nil: an error frame), and how to say it: 125 if its cleanup left
// processes or bash's status is unknown, else 124 for a timeout, 128+N for
// a cancel by signal N, 130 for any other cancel, else bash's exit code;
// 125, 126 or 127 after an error frame.
func expectedExit(t *protocol.Totals) (lo, hi int, promise string) {
	switch {
	case t == nil:
		return 125, 127, "125, 126 or 127"
	case len(t.Cleanup.Stragglers) > 0 || t.Cleanup.StragglersOmitted > 0 || t.ExitCode == nil:
		return 125, 125, "125"
	case t.TimedOut, t.Idle, t.NeedsInput:
		return 124, 124, "124"
	case t.Cancelled && t.CancelReason == protocol.ReasonSignal:
		return 129, 192, "128+N"
	case t.Cancelled:
		return 130, 130, "130"
	}
	return *t.ExitCode, *t.ExitCode, strconv.Itoa(*t.ExitCode)
}

// unreported is the error of a run whose report does not count (doubt):
// what is left of it is killed as for a shellsup that died without totals.
func (p *process) unreported(out outcome) *Error {
	var b strings.Builder
	fmt.Fprintf(&b, "unreported: %s", p.doubt(out))
	if why := p.abandonment(); why != "" {
		b.WriteString("; " + why)
	}
	var ended error
	if out.start == nil {
		ended = errEndedBeforeStart // no leaf named: sweep
	}
	b.WriteString(p.leftover(out.start, ended))
	if s := strings.TrimSpace(p.stderr.String()); s != "" {
		fmt.Fprintf(&b, "; its stderr: %q", s)
	}
	return newError(CategoryProtocol, b.String(), nil)
}

// lateTotals describes a run whose shellsup failed to report in time but,
// once resumed and asked to cancel, cleaned up and reported after all.
func (p *process) lateTotals(out outcome) *Error {
	t := out.totals
	msg := fmt.Sprintf("shellsup (pid %d) failed to report in time; %s; it then cleaned up and reported (timedOut %v, cancelled %v, %d straggler(s))",
		p.cmd.Process.Pid, p.abandonment(), t.TimedOut, t.Cancelled, len(t.Cleanup.Stragglers)+t.Cleanup.StragglersOmitted)
	return newError(CategoryProtocol, msg, nil)
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
