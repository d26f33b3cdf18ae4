// Package cli is shellsup's command line: it parses the options into
// supervisor.Args and runs the supervisor, or prints the help or the
// version, or runs a subcommand (decode, sweep). The shellsup binary
// (cmd/shellsup) and the Go binding's embedded mode
// (bindings/go/embedded) both run it, so a harness that re-executes
// itself as the supervisor accepts exactly the binary's command line.
package cli
