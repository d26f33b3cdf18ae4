package shellsup

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/request"
)

// Interactive runs and jobs (docs/interactive.md): a terminal (Request.PTY)
// or a stdin pipe (Request.Stdin), input frames, Expect, an idle timeout.

// InputChunk is the most input one frame carries: Write sends larger input
// in several frames, each once the control channel has room for it.
const InputChunk = 64 << 10

// InputInFlight bounds the input Write sends beyond what shellsup says it
// has taken (its taken frames): shellsup then reads a cancel at once, even
// while the program reads nothing.
const InputInFlight = 1 << 20

// ExpectWindow bounds the output since the last Expect that Expect searches:
// the last 1 MiB of it.
const ExpectWindow = 1 << 20

// Interactive are the Request fields of an interactive run.
type Interactive struct {
	// PTY runs bash on a new pseudo-terminal, its controlling terminal
	// (shellsup --pty): one output stream, stdout, with the terminal's
	// \r\n line ends; TERM=xterm-256color unless the environment sets
	// TERM. Run ends as soon as the program waits for input (Result.Status
	// "needs_input", its prompt in Result.Prompt, the tree cleaned up);
	// a Job can be driven with Write, Expect, SignalGroup and Resize.
	PTY bool
	// PTYCols and PTYRows are the terminal's size; 0 means 80 by 24.
	PTYCols, PTYRows int
	// Stdin gives bash a pipe as stdin (shellsup --stdin pipe) instead of
	// /dev/null: a Job's Write feeds it, SendEOF closes it. Not with PTY.
	Stdin bool
	// IdleTimeout ends the run once it has printed nothing for this long
	// (shellsup --idle-timeout): Result.Status "idle", Idle set, TimedOut
	// not. 0 means none.
	IdleTimeout time.Duration
}

// InteractiveResult are the Result fields of an interactive run's ending.
type InteractiveResult struct {
	// Idle: the idle timeout ended the run (Result.Status "idle").
	Idle bool
	// NeedsInput: a PTY Run's program waited for input (Result.Status
	// "needs_input").
	NeedsInput bool
	// Prompt is, with NeedsInput, the last line the program printed.
	Prompt string
}

// interactiveOptions is the validated Interactive.
type interactiveOptions struct {
	pty        bool
	cols, rows int
	stdin      bool
	idle       time.Duration
	stopOnWait bool // Run: end at the first waiting frame
}

func validateInteractive(in Interactive, c *config) error {
	switch {
	case in.PTY && in.Stdin:
		return &request.ValidationError{Msg: "PTY and Stdin exclude each other: with PTY the terminal is the command's stdin"}
	case !in.PTY && (in.PTYCols != 0 || in.PTYRows != 0):
		return &request.ValidationError{Msg: fmt.Sprintf("PTYCols %d and PTYRows %d need PTY", in.PTYCols, in.PTYRows)}
	case in.IdleTimeout < 0:
		return &request.ValidationError{Msg: fmt.Sprintf("idle timeout must be greater than 0 (0: none) (got %v)", in.IdleTimeout)}
	}
	cols, rows := in.PTYCols, in.PTYRows
	if in.PTY && (cols != 0 || rows != 0) {
		if _, _, err := request.ParsePTYSize(fmt.Sprintf("%dx%d", cols, rows)); err != nil {
			return err
		}
	}
	if in.IdleTimeout > 0 {
		if err := request.ValidateIdleTimeout(in.IdleTimeout.Seconds(), in.IdleTimeout.String()); err != nil {
			return err
		}
	}
	c.interactive = interactiveOptions{pty: in.PTY, cols: cols, rows: rows, stdin: in.Stdin, idle: in.IdleTimeout}
	return nil
}

// args are shellsup's flags for the options.
func (o interactiveOptions) args() []string {
	var args []string
	if o.pty {
		args = append(args, "--pty")
	}
	if o.cols != 0 {
		args = append(args, fmt.Sprintf("--pty-size=%dx%d", o.cols, o.rows))
	}
	if o.stdin {
		args = append(args, "--stdin=pipe")
	}
	if o.idle > 0 {
		args = append(args, "--idle-timeout="+seconds(o.idle))
	}
	if o.stopOnWait && o.pty {
		args = append(args, "--stop-on-input")
	}
	return args
}

func interactiveOf(t *protocol.Totals) InteractiveResult {
	return InteractiveResult{Idle: t.Idle, NeedsInput: t.NeedsInput, Prompt: t.Prompt}
}

// ErrNoInput is what the input methods return for a job started with
// neither PTY nor Stdin.
var ErrNoInput = errors.New("shellsup: the job takes no input: start it with PTY or Stdin")

// jobInput is a job's interactive state.
type jobInput struct {
	sendMu  sync.Mutex // one input writer at a time: frames stay in order
	mu      sync.Mutex
	inputs  int       // Write and SendEOF calls
	inputAt time.Time // the last
	waiting *protocol.Waiting
	waitAt  time.Time
	sent    int64 // bytes of input frames sent (under sendMu)
	taken   int64 // shellsup's last taken frame (under mu)

	expectMu sync.Mutex
	cursor   [2]spillCursor // Expect's position in the spill files
	buf      string         // output since the last Expect, at most ExpectWindow
}

func (j *Job) takesInput() error {
	if !j.cfg.interactive.pty && !j.cfg.interactive.stdin {
		return ErrNoInput
	}
	return nil
}

func (j *Job) markInput() {
	j.in.mu.Lock()
	j.in.inputs++
	j.in.inputAt = time.Now()
	j.in.mu.Unlock()
}

// sawTaken records a taken frame (from the frame reader).
func (j *Job) sawTaken(t *protocol.Taken) {
	j.in.mu.Lock()
	j.in.taken = t.Bytes
	j.in.mu.Unlock()
}

// inFlight is the input sent that shellsup has not taken yet.
func (j *Job) inFlight() int64 {
	j.in.mu.Lock()
	defer j.in.mu.Unlock()
	return j.in.sent - j.in.taken
}

// sawWaiting records a waiting frame (from the frame reader).
func (j *Job) sawWaiting(w *protocol.Waiting) {
	j.in.mu.Lock()
	j.in.waiting, j.in.waitAt = w, time.Now()
	j.in.mu.Unlock()
}

// Write sends b to the job's terminal (PTY) or stdin pipe (Stdin) and
// returns once shellsup has taken all of it. A program that does not read
// holds Write (shellsup buffers at most one frame); ctx bounds the wait,
// leaving the input sent so far. After the job has ended, input is dropped
// and Write returns nil.
func (j *Job) Write(ctx context.Context, b []byte) error {
	if err := j.takesInput(); err != nil {
		return err
	}
	j.in.sendMu.Lock()
	defer j.in.sendMu.Unlock()
	j.markInput()
	defer j.markInput()
	for len(b) > 0 {
		n := min(len(b), InputChunk)
		for j.inFlight() >= InputInFlight {
			select {
			case <-j.done:
				return nil
			case <-j.noticed: // the ending began: input is dropped
				return nil
			case <-ctx.Done():
				return fmt.Errorf("shellsup: writing input to the job: %w", ctx.Err())
			case <-time.After(2 * time.Millisecond):
			}
		}
		if err := j.sendRoomy(ctx, &protocol.Input{Data: b[:n]}); err != nil {
			return err
		}
		j.in.mu.Lock()
		j.in.sent += int64(n)
		j.in.mu.Unlock()
		b = b[n:]
	}
	return nil
}

// SendEOF ends the input: with Stdin the pipe is closed; on a terminal the
// EOF character (^D) is written, which ends the input of a program reading
// at the start of a line.
func (j *Job) SendEOF(ctx context.Context) error {
	if err := j.takesInput(); err != nil {
		return err
	}
	j.in.sendMu.Lock()
	defer j.in.sendMu.Unlock()
	j.markInput()
	return j.sendRoomy(ctx, &protocol.EOF{})
}

// SignalGroup sends a signal — "INT", "QUIT", "TSTP", "HUP", "TERM" or
// "CONT" — to the terminal's foreground process group (what Ctrl-C does),
// or without a terminal to bash's process group.
func (j *Job) SignalGroup(ctx context.Context, name string) error {
	if err := j.takesInput(); err != nil {
		return err
	}
	name = strings.TrimPrefix(strings.ToUpper(name), "SIG")
	ok := false
	for _, s := range protocol.InputSignals {
		ok = ok || s == name
	}
	if !ok {
		return invalid(&request.ValidationError{Msg: fmt.Sprintf("signal must be one of %s (got %q)", strings.Join(protocol.InputSignals, ", "), name)})
	}
	j.in.sendMu.Lock()
	defer j.in.sendMu.Unlock()
	return j.sendRoomy(ctx, &protocol.Signal{Signal: name})
}

// Resize sets the terminal's size; the program gets SIGWINCH.
func (j *Job) Resize(ctx context.Context, cols, rows int) error {
	if !j.cfg.interactive.pty {
		return ErrNoInput
	}
	if _, _, err := request.ParsePTYSize(fmt.Sprintf("%dx%d", cols, rows)); err != nil {
		return invalid(err)
	}
	j.in.sendMu.Lock()
	defer j.in.sendMu.Unlock()
	return j.sendRoomy(ctx, &protocol.Resize{Cols: cols, Rows: rows})
}

// sendRoomy sends f once the control channel has room for it, so that a
// program that does not read never holds the lock a cancel needs. After
// the job's end it sends nothing and returns nil.
func (j *Job) sendRoomy(ctx context.Context, f protocol.Frame) error {
	for {
		if !j.Running() {
			return nil
		}
		room, err := j.p.controlRoom(50 * time.Millisecond)
		if err != nil {
			return nil // closed: the job is ending
		}
		if room {
			if err := j.p.send(f); err != nil && !errors.Is(err, errEnded) {
				return nil // shellsup is gone: the frame stream says why
			}
			return nil
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("shellsup: writing input to the job: %w", err)
		}
	}
}

// Waiting reports whether the job's program waits for input: shellsup saw
// it blocked reading the terminal after 0.5 s without output, and nothing
// was printed or written since. prompt is the last line it printed.
func (j *Job) Waiting() (waiting bool, prompt string) {
	j.in.mu.Lock()
	w, at, inputAt := j.in.waiting, j.in.waitAt, j.in.inputAt
	j.in.mu.Unlock()
	if w == nil || !j.Running() || !at.After(inputAt) {
		return false, ""
	}
	j.filesMu.RLock()
	defer j.filesMu.RUnlock()
	if j.filesErr() != nil {
		return false, ""
	}
	var size int64
	for _, f := range j.files {
		st, err := f.Stat()
		if err != nil {
			return false, ""
		}
		size += st.Size()
	}
	if size != w.Bytes {
		return false, ""
	}
	return true, w.Prompt
}

// Expect waits for re in the output since the last Expect (stdout; with
// Stdin stderr too; at most its last ExpectWindow bytes) and returns the
// match and its submatches, as FindStringSubmatch; the next Expect
// searches after the match. A job that ends without a match gives an
// error at once (wrapping ErrJobEnded); ctx done gives an error wrapping
// ctx.Err(), the job left running.
func (j *Job) Expect(ctx context.Context, re *regexp.Regexp) ([]string, error) {
	if re == nil {
		return nil, invalid(&request.ValidationError{Msg: "Expect needs a regular expression (got nil)"})
	}
	j.in.expectMu.Lock()
	defer j.in.expectMu.Unlock()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		ended := !j.Running()
		if err := j.expectRead(ended); err != nil {
			return nil, err
		}
		if loc := re.FindStringSubmatchIndex(j.in.buf); loc != nil {
			m := make([]string, len(loc)/2)
			for i := range m {
				if loc[2*i] >= 0 {
					m[i] = j.in.buf[loc[2*i]:loc[2*i+1]]
				}
			}
			j.in.buf = j.in.buf[loc[1]:]
			return m, nil
		}
		if ended {
			return nil, fmt.Errorf("shellsup: Expect(%q): %w (exit code %d) without a match; the output since the last Expect ends with %q",
				re.String(), ErrJobEnded, j.res.ExitCode, tailOf(j.in.buf, 500))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("shellsup: Expect(%q): %w; the job is still running; the output since the last Expect ends with %q",
				re.String(), ctx.Err(), tailOf(j.in.buf, 500))
		case <-j.done:
		case <-tick.C:
		}
	}
}

// ErrJobEnded is wrapped by Expect's error for a job that ended first.
var ErrJobEnded = errors.New("the job ended")

// expectRead appends the new output to Expect's buffer.
func (j *Job) expectRead(ended bool) error {
	j.filesMu.RLock()
	defer j.filesMu.RUnlock()
	if err := j.filesErr(); err != nil {
		return err
	}
	streams := 2
	if j.cfg.interactive.pty {
		streams = 1 // stderr is empty: the terminal is one stream
	}
	for i := 0; i < streams; i++ {
		for {
			text, more, _, err := j.in.cursor[i].next(j.files[i], ReadMax, ended)
			if err != nil {
				return newError(CategoryInternal, fmt.Sprintf("reading the job's spill file: %v", err), err)
			}
			j.in.buf += text
			if len(j.in.buf) > ExpectWindow {
				j.in.buf = j.in.buf[len(j.in.buf)-ExpectWindow:]
			}
			if !more {
				break
			}
		}
	}
	return nil
}

func tailOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
