package cli

import (
	"flag"

	"github.com/shellsup/shellsup/supervisor"
)

// interactiveFlags are the options of an interactive run (docs/interactive.md).
func interactiveFlags(fs *flag.FlagSet, in *supervisor.InteractiveArgs) {
	fs.BoolVar(&in.PTY, "pty", false, "")
	fs.StringVar(&in.PTYSize, "pty-size", "", "")
	fs.StringVar(&in.Stdin, "stdin", "", "")
	fs.StringVar(&in.IdleTimeout, "idle-timeout", "", "")
	fs.BoolVar(&in.StopOnInput, "stop-on-input", false, "")
}
