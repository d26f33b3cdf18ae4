package supervisor

import (
	"github.com/shellsup/shellsup/request"
)

// InteractiveArgs are the options of an interactive run, as given.
type InteractiveArgs struct {
	PTY         bool   // --pty
	PTYSize     string // --pty-size COLSxROWS
	Stdin       string // --stdin null|pipe
	IdleTimeout string // --idle-timeout SECONDS
	StopOnInput bool   // --stop-on-input
}

// InteractiveConfig is the validated InteractiveArgs.
type InteractiveConfig struct {
	PTY        bool // bash on a new pseudo-terminal
	Cols, Rows int  // the terminal's size, with PTY (else 0)
	// StdinPipe gives bash a pipe fed by input frames instead of /dev/null.
	StdinPipe bool
	// IdleTimeout ends the run after this many seconds without output; 0: none.
	IdleTimeout float64
	// StopOnInput ends a --pty run with status needs_input once the
	// program waits for input (a run, not a job).
	StopOnInput bool
}

// validateInteractive checks the interactive options of a and fills them
// into cfg.
func (a Args) validateInteractive(cfg *Config) error {
	in := a.Interactive
	cfg.PTY = in.PTY
	if in.PTY {
		cfg.Cols, cfg.Rows = request.DefaultPTYCols, request.DefaultPTYRows
	}
	if in.PTYSize != "" {
		if !in.PTY {
			return invalid("--pty-size %q needs --pty", in.PTYSize)
		}
		var err error
		if cfg.Cols, cfg.Rows, err = request.ParsePTYSize(in.PTYSize); err != nil {
			return err
		}
	}
	if in.Stdin != "" {
		if err := request.ValidateStdin(in.Stdin); err != nil {
			return err
		}
		if in.PTY {
			return invalid("--stdin %q and --pty exclude each other: with --pty the terminal is bash's stdin", in.Stdin)
		}
		cfg.StdinPipe = in.Stdin == request.StdinPipe
	}
	if in.StopOnInput && !in.PTY {
		return invalid("--stop-on-input needs --pty: only a terminal tells that a program waits for input")
	}
	cfg.StopOnInput = in.StopOnInput
	if in.IdleTimeout != "" {
		var err error
		if cfg.IdleTimeout, err = request.ParseIdleTimeout(in.IdleTimeout); err != nil {
			return err
		}
	}
	return nil
}
