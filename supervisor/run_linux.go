package supervisor

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/shellsup/shellsup/cgroup"
	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/internal/affinity"
	"github.com/shellsup/shellsup/ports"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper"
	"github.com/shellsup/shellsup/request"
	"github.com/shellsup/shellsup/spill"
)

// Bounds of the ending, beyond the grace the caller chooses (package
// request states them for the bindings' watchdog too).
const (
	killBudget = request.CleanupKill      // stop-and-kill loop after the grace
	drainGrace = request.CleanupDrain     // pipes held open by something outside the tree
	goneFlush  = request.CleanupGoneFlush // writing totals to a parent that is gone
	// summaryWait bounds the summary's write in human mode when stderr is a
	// terminal, which may have stopped taking output (see forward_linux.go).
	summaryWait = 2 * time.Second
	// maxStragglers keeps totals well inside one 1 MiB frame however many
	// processes survive; the rest are counted.
	maxStragglers = 100
)

// trigger is the cause that ended the run: the first of bash's exit, the
// timeout and a cancel; bash's exit wins a tie (see doc.go).
type trigger int

const (
	byExit trigger = iota + 1
	byTimeout
	byCancel
	byIdle       // --idle-timeout: nothing printed for that long
	byNeedsInput // --stop-on-input: the program waits for input
)

// word is the trigger as totals.cleanup.trigger carries it.
func (t trigger) word() string {
	switch t {
	case byTimeout:
		return protocol.TriggerTimeout
	case byCancel:
		return protocol.TriggerCancel
	case byIdle:
		return protocol.TriggerIdle
	case byNeedsInput:
		return protocol.TriggerNeedsInput
	}
	return protocol.TriggerExit
}

// ending is what stopped the run; the first cause wins.
type ending struct {
	trigger trigger
	reason  string         // the cancel reason, when trigger is byCancel
	sig     syscall.Signal // the signal that cancelled the run, 0 for other causes
}

// cause is one reason to cancel, with the signal behind it, if any.
type cause struct {
	reason string
	sig    syscall.Signal
}

// session is one run in progress.
type session struct {
	cfg     Config
	leader  leader // the end of bash: the Waiter's, or the PID-namespace init's report
	out     *output
	capture *decoder.Capture
	streams *streams
	cancels chan cause
	started time.Time // bash spawned
	cleaned time.Time // cleanup over
	limits  cgroup.Stats
	leafDir string // the v2 leaf, reported in start
	ttyErr  bool   // human mode with stderr a terminal: the summary's write is bounded

	// tmpRemoved and tmpLeft: the private TMPDIR's removal at cleanup.
	tmpRemoved int
	tmpLeft    string

	// Interactive runs (docs/interactive.md).
	input         *inputSink  // nil: stdin /dev/null
	quiet         *quietWatch // nil: no idle timeout and no terminal
	prompt        lastLine    // the last line of stdout
	waitingPrompt string      // the prompt of the last waiting frame; under mu

	// ended is set once the ending is decided: a SIGINT or SIGTERM after
	// it skips the rest of the grace, closing hurry.
	ended     atomic.Bool
	hurry     chan struct{}
	hurryOnce sync.Once

	// mu orders the answers to ports queries before totals: once final is
	// set, no other frame may follow.
	mu    sync.Mutex
	final bool
}

// run is the plan of a run, one step per line. Before spawn any failure is
// fatal and nothing exists; after it, every path goes through the cleanup
// and ends with totals.
func run(cfg Config, stdio Stdio, out *output) int {
	ppid := startParent // read before main: a parent that dies later is noticed
	// The set-up's thread hand-offs run on one CPU (see internal/affinity).
	release := affinity.Hold()
	defer release()
	cont, leaf, set, code := prepare(cfg, out)
	if cont == nil {
		return code
	}
	sigs := notifySignals()
	s := newSession(cfg, out, set, stdio)
	s.leafDir = leafDir(leaf)
	release() // before the fork: bash gets every CPU shellsup was given
	c, err := spawnFor(cfg, cont, leaf)
	if err != nil {
		closeLeaf(leaf)
		s.streams.removeSpill() // nothing ran: nothing to keep
		_, _, _ = removeTmp(cfg, true)
		return s.spawnFailed(err)
	}
	w := reaper.StartWaiter(c.pid)
	defer sweepBeside(leaf, cfg)()
	s.leader = c.leader(w)
	time.Sleep(seamStartDelay())
	s.announce(c, cont)
	d := startDrain(c, s.streams.pumps)
	s.input = c.input
	if s.input != nil {
		s.input.bashGone = func() bool { return exited(s.leader) }
		s.input.taken = s.tellTaken
	}
	s.quiet = s.startQuietWatch(c.input)
	s.watchCancels(stdio.Stdin, sigs)
	defer watchParent(ppid, stdio, s.cancel)()
	end := s.awaitEnding(s.leader)
	s.ended.Store(true)
	s.endInput()
	s.notice(end)
	rep := cont.Cleanup(w, reaper.Deadlines{Grace: cfg.graceDuration(), Kill: killBudget, Hurry: s.hurry})
	s.cleaned = time.Now()
	s.limits = leafStats(leaf) // final: Cleanup closed the leaf
	drainTimedOut := d.finish(drainGrace, s.hurry)
	s.tmpRemoved, s.tmpLeft, err = removeTmp(cfg, len(rep.Stragglers) == 0)
	if err != nil {
		s.out.line("shellsup: " + err.Error())
	}
	return s.finish(w, end, rep, drainTimedOut, d.lost())
}

// prepare checks what the run asks for and makes what it needs before the
// spawn: the containment, the leaf, the private TMPDIR and the spill files.
// A nil containment means it failed, code is the exit code, and nothing is
// left behind.
func prepare(cfg Config, out *output) (*reaper.Containment, *cgroup.Leaf, *spill.Set, int) {
	cont, err := setupContainment()
	if err == nil {
		err = checkUser(cfg)
	}
	if err != nil {
		return nil, nil, nil, fail(out, protocol.CategoryContainmentUnavailable, err, ExitFailed)
	}
	leaf, err := setupCgroup(cfg, cont)
	if err == nil {
		err = checkRequired(cfg, cont)
	}
	if err == nil {
		err = checkSandbox(cfg, inNamespace(cfg, leaf)) // once --pidns-auto has decided, with the leaf
	}
	if err != nil {
		closeLeaf(leaf)
		return nil, nil, nil, fail(out, protocol.CategoryContainmentUnavailable, err, ExitFailed)
	}
	if err := closeInheritedFds(); err != nil {
		closeLeaf(leaf)
		return nil, nil, nil, fail(out, protocol.CategoryInternal, fmt.Errorf("marking inherited fds close-on-exec: %w", err), ExitFailed)
	}
	if err := makeTmp(cfg); err != nil {
		closeLeaf(leaf)
		return nil, nil, nil, fail(out, protocol.CategoryInternal, err, ExitFailed)
	}
	set, err := openSpill(cfg)
	if err != nil {
		closeLeaf(leaf)
		_, _, _ = removeTmp(cfg, true) // empty: nothing ran
		return nil, nil, nil, fail(out, protocol.CategoryInternal, err, ExitFailed)
	}
	return cont, leaf, set, 0
}

func newSession(cfg Config, out *output, set *spill.Set, stdio Stdio) *session {
	capture, err := decoder.NewCapture(cfg.Budget)
	if err != nil {
		panic(fmt.Sprintf("budget %d passed validation: %v", cfg.Budget, err)) // Validate checked it
	}
	s := &session{cfg: cfg, out: out, capture: capture, cancels: make(chan cause, 8), hurry: make(chan struct{}), started: time.Now()}
	gone := func() { s.cancel(reasonOutputGone) }
	out.onFail = gone
	emit := out.progress
	if !cfg.Frames {
		emit = func(decoder.Stream, string) {} // the terminal gets the raw bytes instead
	}
	if cfg.PTY {
		emit = recordPrompt(&s.prompt, emit)
	}
	s.streams = newStreams(cfg, set, capture, emit, stdio, gone)
	s.ttyErr = !cfg.Frames && stdio.Stderr != nil && isTerminal(stdio.Stderr)
	return s
}

// cancel cancels for reason; reasonOutputGone becomes parent-gone or a
// broken pipe (outputGone).
func (s *session) cancel(reason string) {
	if reason == reasonOutputGone {
		s.outputGone()
		return
	}
	s.cancelBy(cause{reason: reason})
}

// Reasons inside shellsup, never sent in a frame.
const (
	// reasonOutputGone: shellsup's stdout or stderr lost its reader (a
	// pipe or a socket whose peer closed, a failed write).
	reasonOutputGone = "output-gone"
	// reasonBrokenPipe is reasonOutputGone in human mode.
	reasonBrokenPipe = "broken-pipe"
)

// outputGone is a reader of shellsup's output gone. In frames mode that
// reader is the parent (the frame stream): parent-gone. In human mode it is
// a pipeline's next command (shellsup ... | head -1): a broken pipe, which
// ends the run as SIGPIPE ends a pipeline's writer, with 141 (128+13), and
// the cleanup's grace.
func (s *session) outputGone() {
	if s.cfg.Frames {
		s.cancelBy(cause{reason: protocol.ReasonParentGone})
		return
	}
	s.cancelBy(cause{reason: reasonBrokenPipe, sig: syscall.SIGPIPE})
}

// A parent-gone cancel also hurries the cleanup: with the owner gone nobody
// waits for a graceful end, so a TERM-ignorer is killed at once, not after
// the grace.
func (s *session) cancelBy(c cause) {
	if c.reason == protocol.ReasonParentGone {
		s.hurryUp()
	}
	select {
	case s.cancels <- c:
	default: // enough causes queued; only the first counts
	}
}

// hurryUp ends the cleanup's grace at once.
func (s *session) hurryUp() { s.hurryOnce.Do(func() { close(s.hurry) }) }

func (s *session) spawnFailed(err error) int {
	var ee *execError
	if errors.As(err, &ee) {
		return fail(s.out, protocol.CategoryExecFailed, err, ee.exitCode())
	}
	var ue *userError
	var se *sandboxError
	if isUnavailable(err) || errors.As(err, &ue) || errors.As(err, &se) {
		return fail(s.out, protocol.CategoryContainmentUnavailable, err, ExitFailed)
	}
	return fail(s.out, protocol.CategoryInternal, err, ExitFailed)
}

// announce sends the start frame.
func (s *session) announce(c *child, cont *reaper.Containment) {
	spillDir := ""
	if s.streams.spill != nil {
		spillDir = s.streams.spill.Dir
	}
	s.out.frame(&protocol.Start{
		Version: protocol.Version, Pid: os.Getpid(), ChildPid: c.bashPid(),
		Command: s.cfg.shownCommand(), Cwd: s.cfg.Cwd, Timeout: s.cfg.Deadline.Seconds, Budget: s.cfg.Budget,
		Containment: cont.Name(), Cgroup: s.leafDir,
		Capture: s.cfg.Capture.String(), Lifetime: s.cfg.lifetime(), Spill: spillDir, Login: !s.cfg.NoLogin,
		User: runAs(s.cfg.User), Sandbox: sandboxReport(s.cfg.Sandbox), Tidy: s.cfg.Tidy,
	})
}

// watchCancels turns signals, the control channel and output failures into
// cancel reasons. A terminating signal (see cancelSignals) means "signal",
// or "parent-gone" when shellsup has been reparented (its parent died and a
// parent-death signal brought the news). A SIGINT or SIGTERM once the
// ending is decided (the second Ctrl-C) skips the rest of the cleanup's grace.
func (s *session) watchCancels(stdin *os.File, sigs *signalSet) {
	ppid := startParent
	go func() {
		first := true
		for sig := range sigs.cancel {
			n, _ := sig.(syscall.Signal)
			if !first || s.ended.Load() {
				if n == syscall.SIGINT || n == syscall.SIGTERM {
					s.hurryUp()
				}
				continue
			}
			first = false
			if os.Getppid() != ppid {
				s.cancel(protocol.ReasonParentGone)
			} else {
				s.cancelBy(cause{reason: protocol.ReasonSignal, sig: n})
			}
		}
	}()
	if s.cfg.Frames && stdin != nil && isControlChannel(stdin) {
		var input func(protocol.Frame)
		if s.input != nil {
			input = s.input.handle
		}
		go watchControl(stdin, s.cancel, s.answerPorts, input)
	}
}

// awaitEnding waits for the first of: bash exited, the timeout, a cancel.
func (s *session) awaitEnding(w leader) ending {
	timer := time.NewTimer(s.cfg.Deadline.Duration())
	defer timer.Stop()
	select {
	case <-w.LeaderExited():
		return ending{trigger: byExit}
	case <-timer.C:
		if leaderMadeIt(w) {
			return ending{trigger: byExit}
		}
		return ending{trigger: byTimeout}
	case c := <-s.cancels:
		if leaderMadeIt(w) {
			return ending{trigger: byExit}
		}
		return ending{trigger: byCancel, reason: c.reason, sig: c.sig}
	case t := <-s.quiet.endings():
		if leaderMadeIt(w) {
			return ending{trigger: byExit}
		}
		return ending{trigger: t}
	}
}

// tieWait bounds how long a deadline or a cancel waits for bash to stop.
const tieWait = 10 * time.Millisecond

// tieBreaker is a leader that can settle a tie with bash's exit: the
// Waiter of a bash that is shellsup's own child, or the PID-namespace init.
type tieBreaker interface {
	StopLeader(within time.Duration) bool
}

// leaderMadeIt settles a tie between bash's exit and a deadline or cancel:
// the first cause wins, and the deadline or cancel counts only once bash is
// stopped (then it cannot exit by itself). A bash that exited before, reaped
// or not, made it: its own status is the result, never timedOut with exit
// code 0. Under --pidns bash is the init's child; there an exit the init
// has reported wins.
func leaderMadeIt(w leader) bool {
	if w.LeaderDone() {
		return true
	}
	if tb, ok := w.(tieBreaker); ok {
		return tb.StopLeader(tieWait)
	}
	return false
}

func exited(w leader) bool {
	select {
	case <-w.LeaderExited():
		return true
	default:
		return false
	}
}

// notice reports a timeout or cancel before the cleanup starts.
func (s *session) notice(end ending) {
	switch end.trigger {
	case byTimeout:
		s.out.frame(&protocol.Timeout{Timeout: s.cfg.Deadline.Seconds})
		if s.cfg.lifetime() > 0 {
			s.noticeLine(fmt.Sprintf("shellsup: the job's lifetime (%gs) is over; cleaning up", s.cfg.Deadline.Seconds))
		} else {
			s.noticeLine(fmt.Sprintf("shellsup: timed out after %gs; cleaning up", s.cfg.Deadline.Seconds))
		}
	case byCancel:
		s.out.frame(&protocol.Cancel{Reason: end.reason})
		if end.reason != reasonBrokenPipe { // the summary is the one line of a broken pipe
			s.noticeLine("shellsup: " + end.cancelled() + "; cleaning up")
		}
	case byIdle:
		s.out.frame(&protocol.Idle{IdleTimeout: s.cfg.IdleTimeout})
		s.noticeLine(fmt.Sprintf("shellsup: no output for %gs (--idle-timeout); cleaning up", s.cfg.IdleTimeout))
	case byNeedsInput:
		s.noticeLine("shellsup: the program waits for input (--stop-on-input); cleaning up")
	}
}

// alarming reports whether the summary says something went wrong, which
// --quiet still prints: shellsup failed (125: stragglers), the command
// tampered with its limits, a leaf was left, or output was lost.
func alarming(t *protocol.Totals, code int, l lost) bool {
	return code == ExitFailed || len(t.Cleanup.Tampered) > 0 || t.Cleanup.LeafLeft != "" || l.bytes > 0
}

// noticeLine writes a notice in human mode, unless --quiet (errors only).
func (s *session) noticeLine(line string) {
	if !s.cfg.Quiet {
		s.out.line(line)
	}
}

// finish writes the totals (or the summary line) and returns the exit code.
func (s *session) finish(w *reaper.Waiter, end ending, rep reaper.Report, drainTimedOut bool, l lost) int {
	deadline := s.flushLimit(end, l)
	flushed := func() bool {
		select {
		case <-s.out.flush():
			return true
		case <-deadline:
			return false
		}
	}
	flushed() // every progress frame written, so progressBytes is final
	totals := s.totals(w, end, rep, drainTimedOut)
	totals.Status = statusWord(totals, rep.Clean())
	code := exitCode(totals, end, rep)
	s.mu.Lock()
	s.final = true // no ports answer after totals
	s.out.frame(totals)
	s.mu.Unlock()
	if !s.cfg.Quiet || alarming(totals, code, l) { // --quiet: errors only
		s.out.line(summary(totals, end, code, l))
	}
	flushed()
	return code
}

// flushLimit bounds the writing of totals or the summary, or is nil. After
// parent-gone nobody may be reading: a full pipe must not block shellsup's
// exit for ever. In human mode a terminal may have stopped taking output
// (or the drain gave up on a destination): the summary gets summaryWait,
// or hurryFlush once a hurry came. Otherwise the write is waited for, as
// any writer's.
func (s *session) flushLimit(end ending, l lost) <-chan struct{} {
	var d time.Duration
	hurry := s.hurry
	switch {
	case end.reason == protocol.ReasonParentGone:
		d, hurry = goneFlush, nil
	case !s.cfg.Frames && (s.ttyErr || l.gaveUp):
		d = seamSummaryWait(summaryWait)
	default:
		return nil
	}
	c := make(chan struct{})
	go func() {
		defer close(c)
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return
		case <-hurry:
		}
		h := time.NewTimer(hurryFlush)
		defer h.Stop()
		select {
		case <-t.C:
		case <-h.C:
		}
	}()
	return c
}

func (s *session) totals(w *reaper.Waiter, end ending, rep reaper.Report, drainTimedOut bool) *protocol.Totals {
	t := s.capture.Totals()
	res := protocol.Result{
		Command: s.cfg.shownCommand(), Cwd: s.cfg.Cwd, Stdout: t.Stdout, Stderr: t.Stderr,
		Cancelled: end.trigger == byCancel, TimedOut: end.trigger == byTimeout, Truncated: t.Truncated,
		TotalBytes: t.TotalBytes, CapturedBytes: t.CapturedBytes, ProgressBytes: s.out.progressBytes(),
		DurationMs: s.cleaned.Sub(s.started).Milliseconds(),
	}
	select {
	case <-w.Empty():
		<-w.LeaderExited() // closed right after Empty, by the same goroutine
		settle(s.leader)
	default:
	}
	if exited(s.leader) {
		res.ExitCode, res.Signal = statusOf(s.leader.LeaderStatus())
	}
	stragglers := make([]protocol.Straggler, 0, min(len(rep.Stragglers), maxStragglers))
	for _, st := range rep.Stragglers[:min(len(rep.Stragglers), maxStragglers)] {
		stragglers = append(stragglers, protocol.Straggler{Pid: st.Pid, Comm: st.Comm, State: st.State, Reason: st.Reason})
	}
	kept := s.keptText(&res)
	return &protocol.Totals{
		Result:       res,
		CancelReason: end.reason,
		StdoutBytes:  t.StdoutBytes, StderrBytes: t.StderrBytes,
		StreamText: s.streams.text(),
		Redactions: s.streams.redactions(), Capture: s.cfg.Capture.String(), LeftOut: kept,
		Spill:             s.streams.closeSpill(),
		User:              runAs(s.cfg.User),
		Sandbox:           sandboxReport(s.cfg.Sandbox),
		InteractiveTotals: s.interactiveTotals(end),
		Cleanup: protocol.Cleanup{
			Tier: rep.Tier, Trigger: end.trigger.word(), Signalled: rep.Signalled, Killed: rep.Killed,
			Reaped: w.Count(), Rounds: rep.Rounds, Stragglers: stragglers,
			StragglersOmitted: len(rep.Stragglers) - len(stragglers),
			Ms:                rep.Duration.Milliseconds(), DrainTimedOut: drainTimedOut,
			PidsLimitHit: s.limits.PidsLimitHit, OOMKills: s.limits.OOMKills,
			Tampered: s.limits.Tampered, LeafLeft: s.limits.Left,
			TmpRemoved: s.tmpRemoved, TmpLeft: s.tmpLeft,
		},
	}
}

// keptText puts a tail or head+tail window's text into res, and returns
// the bytes it left out (0 for a head capture, whose text res has).
func (s *session) keptText(res *protocol.Result) int64 {
	if s.streams.window == nil {
		return 0
	}
	k := s.streams.window.result()
	res.Stdout, res.Stderr, res.Truncated = k.Stdout, k.Stderr, k.Truncated
	res.CapturedBytes = int64(len(k.Stdout) + len(k.Stderr))
	return k.LeftOut
}

// answerPorts answers a ports query with the ports the tree listens on,
// unless the totals have been sent.
func (s *session) answerPorts(query *protocol.Ports) {
	list, err := ports.Listening("/proc", treeProcs("/proc", os.Getpid()))
	if err != nil {
		list = nil // an unreadable table: answer what is known, nothing
	}
	f := portsAnswer(query, list)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.final {
		s.out.frame(f)
	}
}

// portsAnswer is the answer to query: the listeners on the ports it names
// (all when it names none), at most protocol.MaxPorts of them, the lowest
// ports first, with a count of those left out.
func portsAnswer(query *protocol.Ports, list []ports.Port) *protocol.Ports {
	var numbers []int
	for _, q := range query.Ports {
		numbers = append(numbers, q.Port)
	}
	list, omitted := ports.Cut(ports.Only(list, numbers), protocol.MaxPorts)
	f := &protocol.Ports{Ports: make([]protocol.Port, 0, len(list)), Omitted: omitted}
	for _, p := range list {
		f.Ports = append(f.Ports, protocol.Port{Proto: p.Proto, Addr: p.Addr, Port: p.Port, Pid: p.Pid})
	}
	return f
}
