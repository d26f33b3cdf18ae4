package supervisor

import (
	"os"
	"strings"
	"sync"
	"time"

	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/protocol"
)

// Timing of the quiet watch (docs/interactive.md).
const (
	quietTick = 50 * time.Millisecond
	// waitingQuiet is how long a --pty run prints nothing before shellsup
	// looks whether the program waits for input.
	waitingQuiet = 500 * time.Millisecond
	// waitingEvery spaces the looks while the run stays quiet.
	waitingEvery = 150 * time.Millisecond
	// maxPrompt bounds the prompt a waiting frame carries.
	maxPrompt = 1024
)

// quietWatch ends a run that prints nothing for the idle timeout, and in
// a --pty run sends a waiting frame (and with --stop-on-input ends the
// run) when the program waits for input.
type quietWatch struct {
	s      *session
	in     *inputSink
	idle   time.Duration // 0: no idle timeout
	ending chan trigger  // byIdle or byNeedsInput, once
	done   chan struct{}
}

// startQuietWatch starts the watch, or returns nil when the run has
// neither an idle timeout nor a terminal.
func (s *session) startQuietWatch(in *inputSink) *quietWatch {
	if s.cfg.IdleTimeout <= 0 && (in == nil || !in.tty) {
		return nil
	}
	q := &quietWatch{s: s, in: in, idle: seconds(s.cfg.IdleTimeout), ending: make(chan trigger, 1), done: make(chan struct{})}
	go q.run()
	return q
}

// activity is a count that grows with every byte of output or input.
func (q *quietWatch) activity() int64 {
	n := q.s.capture.Raw()
	if q.in != nil {
		n += q.in.wrote.Load()
	}
	return n
}

func (q *quietWatch) run() {
	t := time.NewTicker(quietTick)
	defer t.Stop()
	last, since, looked, told := q.activity(), time.Now(), time.Time{}, false
	for {
		select {
		case <-q.done:
			return
		case now := <-t.C:
			if n := q.activity(); n != last {
				last, since, told = n, now, false
				continue
			}
			quiet := now.Sub(since)
			if q.idle > 0 && quiet >= q.idle {
				q.ending <- byIdle
				return
			}
			if told || q.in == nil || !q.in.tty || quiet < waitingQuiet || now.Sub(looked) < waitingEvery {
				continue
			}
			looked = now
			if !waitingForTerminal(q.in.f, q.in.ttyDev, "/proc", os.Getpid()) {
				continue
			}
			told = true
			if q.s.tellWaiting() && q.s.cfg.StopOnInput {
				q.ending <- byNeedsInput
				return
			}
		}
	}
}

// stop ends the watch; nil-safe.
func (q *quietWatch) stop() {
	if q != nil {
		close(q.done)
	}
}

// endings is the watch's channel of endings; nil (never ready) without one.
func (q *quietWatch) endings() <-chan trigger {
	if q == nil {
		return nil
	}
	return q.ending
}

// tellWaiting sends a waiting frame with the prompt, unless the totals
// were sent, and reports whether it did.
func (s *session) tellWaiting() bool {
	p := s.prompt.get()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.final || s.ended.Load() {
		return false
	}
	s.waitingPrompt = p
	s.out.frame(&protocol.Waiting{Prompt: p, Bytes: s.capture.Raw()})
	return true
}

// tellTaken sends a taken frame, unless the totals were sent.
func (s *session) tellTaken(total int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.final {
		s.out.frame(&protocol.Taken{Bytes: total})
	}
}

// lastLine keeps the text after the last newline of a stream's captured
// text: the prompt a waiting program printed.
type lastLine struct {
	mu   sync.Mutex
	line []byte
}

func (l *lastLine) add(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i := strings.LastIndexAny(text, "\n"); i >= 0 {
		l.line = append(l.line[:0], text[i+1:]...)
	} else {
		l.line = append(l.line, text...)
	}
	if len(l.line) > maxPrompt {
		l.line = append(l.line[:0], l.line[len(l.line)-maxPrompt:]...)
	}
}

// get is the line, with a carriage return's overwritten part dropped and
// cut to whole code points.
func (l *lastLine) get() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := string(l.line)
	if i := strings.LastIndexByte(strings.TrimRight(s, "\r"), '\r'); i >= 0 {
		s = s[i+1:]
	}
	return strings.ToValidUTF8(s, "")
}

// recordPrompt wraps emit so that the last line of stdout is kept.
func recordPrompt(l *lastLine, emit func(decoder.Stream, string)) func(decoder.Stream, string) {
	return func(st decoder.Stream, text string) {
		if st == decoder.Stdout {
			l.add(text)
		}
		emit(st, text)
	}
}

// endInput stops the quiet watch and the input once the ending is
// decided: a write waiting for the command gives up.
func (s *session) endInput() {
	s.quiet.stop()
	if s.input != nil {
		s.input.stop()
	}
}

// interactiveTotals are the totals' fields for an idle or needs_input
// ending.
func (s *session) interactiveTotals(end ending) protocol.InteractiveTotals {
	switch end.trigger {
	case byIdle:
		return protocol.InteractiveTotals{Idle: true}
	case byNeedsInput:
		s.mu.Lock()
		defer s.mu.Unlock()
		return protocol.InteractiveTotals{NeedsInput: true, Prompt: s.waitingPrompt}
	}
	return protocol.InteractiveTotals{}
}
