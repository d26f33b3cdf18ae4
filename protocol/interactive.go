package protocol

// Frame types of interactive runs (--pty, --stdin pipe; docs/interactive.md).
const (
	// Control frames, parent → shellsup.
	TypeInput  = "input"  // bytes for bash's stdin or the terminal
	TypeEOF    = "eof"    // end of the input
	TypeSignal = "signal" // a signal for the foreground process group
	TypeResize = "resize" // the terminal's new size
	// Frames shellsup sends.
	TypeWaiting = "waiting" // the foreground program waits for input
	TypeIdle    = "idle"    // the idle timeout ended the run (as timeout does)
	TypeTaken   = "taken"   // input frames done with, for the parent's flow control
)

// Signals a signal frame may name.
var InputSignals = []string{"INT", "QUIT", "TSTP", "HUP", "TERM", "CONT"}

// Input is bytes to write to the terminal (--pty) or bash's stdin pipe
// (--stdin pipe), in order. A frame holds at most MaxFrameSize bytes.
type Input struct {
	Data []byte `msgpack:"data"`
}

// EOF ends the input: the stdin pipe is closed; on a terminal the EOF
// character (^D) is written, which ends the input of a program reading a
// line at its start.
type EOF struct{}

// Signal sends a signal, one of InputSignals without "SIG", to the
// terminal's foreground process group (what Ctrl-C does), or without a
// terminal to bash's process group.
type Signal struct {
	Signal string `msgpack:"signal"`
}

// Resize sets the terminal's size; the kernel sends SIGWINCH.
type Resize struct {
	Cols int `msgpack:"cols"`
	Rows int `msgpack:"rows"`
}

// Waiting says the terminal's foreground program is blocked reading the
// terminal and nothing was printed for a while; Prompt is the last line
// printed (the text after the last newline of the captured output).
type Waiting struct {
	Prompt string `msgpack:"prompt"`
	// Bytes is the raw output read so far (both streams): a client that
	// has seen more knows the program printed since.
	Bytes int64 `msgpack:"bytes"`
}

// Idle reports that the run printed nothing for IdleTimeout seconds; the
// cleanup follows, as after a timeout frame.
type Idle struct {
	IdleTimeout float64 `msgpack:"idleTimeout"`
}

// InteractiveTotals are the fields totals carry for the endings of
// interactive runs; each is left out when not set. totals.status is then
// StatusIdle or StatusNeedsInput.
type InteractiveTotals struct {
	Idle       bool   `msgpack:"idle,omitempty"`       // the idle timeout ended the run
	NeedsInput bool   `msgpack:"needsInput,omitempty"` // stopped waiting for input (--stop-on-input)
	Prompt     string `msgpack:"prompt,omitempty"`     // with NeedsInput: the last line printed
}

// Taken says how many bytes of input frames shellsup is done with so far
// (written to the command, or dropped after it closed its end): a parent
// keeps what it sent beyond that small, so that its other control frames
// are read at once.
type Taken struct {
	Bytes int64 `msgpack:"bytes"`
}

func (*Taken) Type() string   { return TypeTaken }
func (*Input) Type() string   { return TypeInput }
func (*EOF) Type() string     { return TypeEOF }
func (*Signal) Type() string  { return TypeSignal }
func (*Resize) Type() string  { return TypeResize }
func (*Waiting) Type() string { return TypeWaiting }
func (*Idle) Type() string    { return TypeIdle }

// newInteractiveFrame is newFrame for the interactive frame types.
func newInteractiveFrame(typ string) Frame {
	switch typ {
	case TypeInput:
		return new(Input)
	case TypeEOF:
		return new(EOF)
	case TypeSignal:
		return new(Signal)
	case TypeResize:
		return new(Resize)
	case TypeWaiting:
		return new(Waiting)
	case TypeIdle:
		return new(Idle)
	case TypeTaken:
		return new(Taken)
	}
	return nil
}

// Cleanup triggers of interactive runs, besides TriggerExit,
// TriggerTimeout and TriggerCancel.
const (
	TriggerIdle       = "idle"        // the idle timeout fired first
	TriggerNeedsInput = "needs_input" // --stop-on-input: the program waited for input
)
