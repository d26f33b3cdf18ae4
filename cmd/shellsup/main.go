// Command shellsup runs one shell command, /bin/bash -lc COMMAND, as a child
// subreaper: it streams the command's output, stops it on time, and kills
// and reaps every process the command started before it reports.
//
//	shellsup [options] -- COMMAND
//	shellsup decode < FRAMES
//
// See the README for the options, the frames protocol and the exit codes.
package main

import (
	"os"

	"github.com/shellsup/shellsup/internal/cli"
	"github.com/shellsup/shellsup/pidns"
)

func main() {
	pidns.MaybeInit() // the PID-namespace init is this binary, re-executed; it never returns
	nameSelf()
	os.Exit(cli.Run(os.Args[1:], cli.StdStreams()))
}
