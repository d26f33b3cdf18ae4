package shellsup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/request"
)

// Ready says what Job.WaitFor waits for. Every condition that is set must
// hold, and at least one must be set.
type Ready struct {
	// Pattern is matched against the job's output since its start, each
	// stream on its own (stdout, stderr), as decoded text. A match must
	// lie within the last 64 KiB of text of its stream at the time it is
	// looked for.
	Pattern *regexp.Regexp
	// Port is a TCP port (1–65535) that a process of the job listens on in
	// shellsup's network namespace — shellsup confirms it is the job's, not
	// a stranger's already there, nor one the job made in a namespace of
	// its own (unshare -n), which a connection here would not reach — and
	// that accepts a connection.
	Port int
	// URL is an http or https URL that answers a GET with a 2xx or 3xx
	// status (redirects are not followed). That alone does not prove the
	// answer came from the job: set Port too for that.
	URL string
}

// Polling of WaitFor.
const (
	waitPoll      = 50 * time.Millisecond // how often output, ports and URL are looked at
	patternWindow = 64 << 10              // text kept per stream for a match across reads
	probeTimeout  = 2 * time.Second       // one connection attempt or HTTP request
)

// ExitedError is what WaitFor returns when the job ended before it was
// ready: Result is its report (exit code, captured output, cleanup), Err
// the error that came with it, if any (a protocol failure, say).
type ExitedError struct {
	Result Result
	Err    error
}

// Error names the exit code and quotes the end of the captured output.
func (e *ExitedError) Error() string {
	var b strings.Builder
	b.WriteString("shellsup: the job ended before it was ready: ")
	r := e.Result
	switch {
	case e.Err != nil && r.Command == "":
		fmt.Fprintf(&b, "%v", e.Err)
		return b.String()
	case r.TimedOut:
		b.WriteString("its lifetime or timeout ran out")
	case r.Cancelled:
		fmt.Fprintf(&b, "it was cancelled (%s)", r.CancelReason)
	default:
		fmt.Fprintf(&b, "exit code %d", r.ExitCode)
	}
	fmt.Fprintf(&b, "; stdout: %s; stderr: %s", tailQuote(r.Stdout), tailQuote(r.Stderr))
	if e.Err != nil {
		fmt.Fprintf(&b, "; %v", e.Err)
	}
	return b.String()
}

// Unwrap returns Err.
func (e *ExitedError) Unwrap() error { return e.Err }

// tailQuote quotes the last KiB of s.
func tailQuote(s string) string {
	const keep = 1 << 10
	if len(s) <= keep {
		return strconv.Quote(s)
	}
	cut := len(s) - keep
	for cut < len(s) && s[cut]&0xC0 == 0x80 { // not inside a code point
		cut++
	}
	return "..." + strconv.Quote(s[cut:])
}

// WaitFor waits until the job is ready as r says. It returns nil once it
// is; an *ExitedError at once if the job ends first (without the pattern
// having appeared); an error wrapping ctx.Err() if ctx is done first —
// the job then goes on running; and a validation *Error for a bad r,
// before it waits.
func (j *Job) WaitFor(ctx context.Context, r Ready) error {
	if err := r.validate(); err != nil {
		return err
	}
	w := waiter{j: j, r: r, pattern: r.Pattern == nil, port: r.Port == 0, url: r.URL == ""}
	tick := time.NewTicker(waitPoll)
	defer tick.Stop()
	for {
		ended := !j.Running() // before looking: then the output is complete
		ok, err := w.check(ctx, ended)
		switch {
		case err != nil:
			return err
		case ok:
			return nil
		case ended:
			return &ExitedError{Result: j.res, Err: j.err}
		}
		select {
		case <-tick.C:
		case <-j.done:
		case <-ctx.Done():
			return fmt.Errorf("shellsup: waiting for the job (pid %d) to be ready (%s): %w; it is still running", j.Pid(), r.describe(), ctx.Err())
		}
	}
}

// validate refuses a Ready that names nothing or something impossible.
func (r Ready) validate() error {
	bad := func(format string, args ...any) error {
		return invalid(&request.ValidationError{Msg: fmt.Sprintf(format, args...)})
	}
	if r.Pattern == nil && r.Port == 0 && r.URL == "" {
		return bad("nothing to wait for: set Ready.Pattern, Ready.Port or Ready.URL")
	}
	if r.Port != 0 && (r.Port < 1 || r.Port > 65535) {
		return bad("port must be between 1 and 65535 (got %d)", r.Port)
	}
	if r.URL != "" {
		u, err := url.Parse(r.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("url must be an absolute http or https URL (got %q)", r.URL)
		}
	}
	return nil
}

// describe names the conditions, for an error message.
func (r Ready) describe() string {
	var parts []string
	if r.Pattern != nil {
		parts = append(parts, fmt.Sprintf("pattern %q", r.Pattern.String()))
	}
	if r.Port != 0 {
		parts = append(parts, fmt.Sprintf("port %d", r.Port))
	}
	if r.URL != "" {
		parts = append(parts, fmt.Sprintf("url %q", r.URL))
	}
	return strings.Join(parts, ", ")
}

// waiter is one WaitFor call: which conditions hold already, and its own
// reading of the output.
type waiter struct {
	j                  *Job
	r                  Ready
	pattern, port, url bool // the condition holds (or is not asked for)
	cursor             [2]spillCursor
	window             [2]string // the last text of each stream, for a match across reads
}

// check looks at the conditions not met yet, in order, and reports
// whether all hold. Once the job has ended only its output can still
// match: a port or URL answering then is not the job's.
func (w *waiter) check(ctx context.Context, ended bool) (bool, error) {
	if !w.pattern {
		ok, err := w.scan()
		if err != nil || !ok {
			return false, err
		}
		w.pattern = true
	}
	if ended && !(w.port && w.url) {
		return false, nil
	}
	if !w.port {
		ok, err := w.j.listening(ctx, w.r.Port)
		if err != nil || !ok {
			return false, err
		}
		w.port = true
	}
	if !w.url {
		if !answers(ctx, w.r.URL) {
			return false, nil
		}
		w.url = true
	}
	return true, nil
}

// scan reads the new output and looks for the pattern in it.
func (w *waiter) scan() (bool, error) {
	w.j.filesMu.RLock()
	defer w.j.filesMu.RUnlock()
	if err := w.j.filesErr(); err != nil {
		return false, err
	}
	ended := !w.j.Running()
	for i := range w.cursor {
		for more := true; more; {
			text, m, _, err := w.cursor[i].next(w.j.files[i], ReadMax, ended)
			if err != nil {
				return false, newError(CategoryInternal, fmt.Sprintf("reading the job's spill file: %v", err), err)
			}
			more = m
			text = w.window[i] + text
			if w.r.Pattern.MatchString(text) {
				return true, nil
			}
			w.window[i] = lastBytes(text, patternWindow)
		}
	}
	return false, nil
}

// lastBytes is the end of s, at most n bytes, starting on a code point.
func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := len(s) - n
	for cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut++
	}
	return s[cut:]
}

// listening reports whether a process of the job listens on TCP port and
// the port accepts a connection.
func (j *Job) listening(ctx context.Context, port int) (bool, error) {
	ports, err := j.askPorts(ctx, []int{port})
	if err != nil {
		// The job has ended or is ending (its control channel is closed), or
		// ctx is done: WaitFor says which.
		return false, nil
	}
	for _, p := range ports {
		if p.Port == port && (p.Proto == "tcp" || p.Proto == "tcp6") && accepts(ctx, p.Addr, port) {
			return true, nil
		}
	}
	return false, nil
}

// accepts reports whether a TCP connection to addr:port can be made; a
// wildcard address is tried on the loopback.
func accepts(ctx context.Context, addr string, port int) bool {
	switch addr {
	case "0.0.0.0", "":
		addr = "127.0.0.1"
	case "::":
		addr = "::1"
	}
	d := net.Dialer{Timeout: probeTimeout}
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
	if err != nil {
		return false
	}
	_ = c.Close() // only the connection mattered
	return true
}

// answers reports whether a GET of u gets a 2xx or 3xx status.
func answers(ctx context.Context, u string) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false
	}
	client := http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close() // the status is all that counts
	return resp.StatusCode >= 200 && resp.StatusCode < 400
}

// errEnded is what Ports returns once the job has ended.
var errEnded = errors.New("the job has ended")

// Ports asks shellsup which ports the job's processes listen on (the
// ports control frame) and returns its answer: one entry per
// proto/addr/port, sorted by port; at most 4096 (protocol.MaxPorts), the
// lowest ports, when there are more. Once the job has ended it returns an
// error; if ctx is done first, an error wrapping ctx.Err().
func (j *Job) Ports(ctx context.Context) ([]Port, error) {
	return j.askPorts(ctx, nil)
}

// askPorts sends a ports query naming the port numbers it asks about (all
// when none) and returns the answer. Naming them keeps the answer to the
// listeners on those ports, so a wanted port is never among those left out
// past protocol.MaxPorts.
func (j *Job) askPorts(ctx context.Context, numbers []int) ([]Port, error) {
	j.portsMu.Lock()
	defer j.portsMu.Unlock()
	query := &protocol.Ports{}
	for _, n := range numbers {
		query.Ports = append(query.Ports, protocol.Port{Port: n})
	}
	if err := j.p.send(query); err != nil {
		return nil, fmt.Errorf("shellsup: asking the job (pid %d) for its ports: %w", j.Pid(), err)
	}
	j.portsAsked++
	answer, err := j.portsAnswer(ctx, j.portsAsked)
	if err != nil {
		return nil, fmt.Errorf("shellsup: asking the job (pid %d) for its ports: %w", j.Pid(), err)
	}
	out := make([]Port, len(answer.Ports))
	for i, p := range answer.Ports {
		out[i] = Port{Proto: p.Proto, Addr: p.Addr, Port: p.Port, Pid: p.Pid}
	}
	return out, nil
}

// portsAnswer waits for the n-th answer, returning errEnded once the job
// has ended and ctx.Err() once ctx is done.
func (j *Job) portsAnswer(ctx context.Context, n int) (*protocol.Ports, error) {
	for {
		j.answersMu.Lock()
		got, last := j.portsAnswers, j.portsLast
		j.answersMu.Unlock()
		if got >= n {
			return last, nil
		}
		select {
		case <-j.portsSeen:
		case <-j.done:
			return nil, errEnded
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// send writes a control frame to shellsup, unless the run is finishing.
func (p *process) send(f protocol.Frame) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return errEnded
	}
	return protocol.NewEncoder(p.control).Encode(f)
}
