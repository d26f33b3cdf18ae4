package supervisor

import (
	"errors"
	"os"

	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/request"
)

// Exit codes of shellsup besides the command's own status (README, "Command line").
const (
	ExitTimedOut   = 124
	ExitFailed     = 125 // shellsup itself failed: validation, containment, internal
	ExitCannotExec = 126
	ExitNotFound   = 127
	ExitCancelled  = 130
)

// Stdio are shellsup's own standard streams.
type Stdio struct {
	Stdin, Stdout, Stderr *os.File
}

// Main validates the arguments, runs the command, and returns shellsup's
// exit code. argsErr is a command-line parsing error, reported like any
// other validation error. Nothing is spawned unless every argument is valid.
func Main(args Args, argsErr error, stdio Stdio) int {
	out := newOutput(args.Frames, stdio.Stdout, stdio.Stderr)
	if argsErr != nil {
		return fail(out, protocol.CategoryValidation, argsErr, ExitFailed)
	}
	cfg, err := args.Validate()
	if err != nil {
		return fail(out, protocol.CategoryValidation, err, ExitFailed)
	}
	return run(cfg, stdio, out)
}

// fail reports a run that cannot happen: an error frame in frames mode, a
// line on stderr in human mode.
func fail(out *output, category string, err error, code int) int {
	msg := err.Error()
	var ve *request.ValidationError
	if errors.As(err, &ve) {
		msg = ve.Msg
	}
	out.frame(&protocol.Error{Category: category, Message: msg, Status: protocol.StatusFailed})
	out.line("shellsup: " + msg)
	<-out.flush()
	return code
}
