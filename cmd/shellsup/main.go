// Command shellsup runs one shell command, /bin/bash -lc COMMAND, as a child
// subreaper: it streams the command's output, stops it on time, and kills
// and reaps every process the command started before it reports.
//
//	shellsup [options] -- COMMAND
//
// See the README for the options, the frames protocol and the exit codes.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/shellsup/shellsup/pidns"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/supervisor"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0"

const usage = `usage: shellsup [options] -- COMMAND

Runs /bin/bash -lc COMMAND with stdin /dev/null, streams its output, and
when it finishes, times out or is cancelled, kills and reaps every process
it started before reporting.

options:
  --timeout SECONDS  stop the command after this long (default 120, at most 600)
  --cwd DIR          working directory (default: the current one)
  --budget BYTES     capture budget shared by stdout and stderr (default 65536, at most 524288)
  --grace SECONDS    SIGTERM → SIGKILL grace at cleanup (default 2, at most 60)
  --frames           machine mode: msgpack frames on stdout, control frames on stdin
  --pidns            run the command in its own PID namespace (see the README)
  --version          print the version
  --help             print this help

exit status: the command's (128+N if a signal N ended it); 124 timed out;
130 cancelled; 125 shellsup failed; 126/127 bash could not be run / not found.
`

func main() {
	pidns.MaybeInit() // the PID-namespace init is this binary, re-executed; it never returns
	args, err := parseArgs(os.Args[1:])
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Print(usage)
		os.Exit(0)
	case errors.Is(err, errVersion):
		fmt.Printf("shellsup %s (protocol %d)\n", version, protocol.Version)
		os.Exit(0)
	}
	os.Exit(supervisor.Main(args, err, supervisor.Stdio{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
}

var errVersion = errors.New("version requested")

// parseArgs reads the options and the COMMAND. --frames is looked for
// first, so that even a malformed command line is reported in the mode the
// caller asked for.
func parseArgs(argv []string) (supervisor.Args, error) {
	var a supervisor.Args
	for _, s := range argv {
		if s == "--" {
			break
		}
		if s == "--frames" || s == "-frames" {
			a.Frames = true
		}
	}
	fs := flag.NewFlagSet("shellsup", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by supervisor.Main, in the right mode
	fs.StringVar(&a.Timeout, "timeout", "", "")
	fs.StringVar(&a.Cwd, "cwd", "", "")
	fs.StringVar(&a.Budget, "budget", "", "")
	fs.StringVar(&a.Grace, "grace", "", "")
	fs.BoolVar(&a.Frames, "frames", a.Frames, "")
	fs.BoolVar(&a.PIDNamespace, "pidns", false, "")
	showVersion := fs.Bool("version", false, "")
	if err := fs.Parse(argv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return a, err
		}
		return a, &protocol.ValidationError{Msg: describeFlagError(err) + "; see shellsup --help"}
	}
	if *showVersion {
		return a, errVersion
	}
	a.Command = fs.Args()
	return a, nil
}

// describeFlagError rewords the flag package's errors in the user's own
// spelling of the option.
func describeFlagError(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return fmt.Sprintf("unknown option %q (options: --timeout, --cwd, --budget, --grace, --frames, --pidns, --version, --help)", "--"+name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Sprintf("option %q needs a value", "--"+name)
	}
	return msg
}
