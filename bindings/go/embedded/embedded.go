package embedded

import (
	"os"

	"github.com/shellsup/shellsup/internal/cli"
	"github.com/shellsup/shellsup/internal/embedmode"
	"github.com/shellsup/shellsup/pidns"
)

// Init makes this program usable as the shellsup binary of its own Run
// calls. Call it at the top of main, before anything else runs. In a
// process started by the binding as the supervisor it runs the supervisor
// and exits; everywhere else it registers os.Executable() with the binding
// and returns.
func Init() {
	// The supervisor's --pidns re-executes this program as the init of the
	// namespace (pid 1, a reserved argv): that never returns either.
	pidns.MaybeInit()
	if os.Getenv(embedmode.MarkerName) == embedmode.MarkerValue {
		os.Exit(superviseAndExit())
	}
	exe, err := os.Executable()
	embedmode.Register(exe, err)
}

// superviseAndExit runs the supervisor for os.Args, with the marker removed
// from the environment and the harness's $GODEBUG restored, so that neither
// the command nor a program it starts inherits the supervisor's. The
// runtime read the supervisor's $GODEBUG (the binary's //go:debug settings)
// when this process started.
func superviseAndExit() int {
	embedmode.RestoreEnv()
	return cli.Run(os.Args[1:], cli.StdStreams())
}
