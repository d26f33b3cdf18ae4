package main

import (
	"fmt"
	"os/exec"
	"time"
)

// ptyLimit is the target for what --pty adds to a run (issue 20).
const ptyLimit = time.Millisecond

// ptyOverhead times `shellsup --pty -- true` against `shellsup -- true`,
// interleaved: the cost of opening the terminal, sizing it and making it
// bash's controlling terminal.
func ptyOverhead() {
	if !hasOption("--pty") {
		row("PTY run overhead over a plain run", "", "", "this binary has no --pty", "≤ +"+ms(ptyLimit), nil)
		return
	}
	var plain, pty []time.Duration
	for i := 0; i < *runs; i++ {
		plain = append(plain, timeRun(exec.Command(*bin, "--", "true")))
		pty = append(pty, timeRun(exec.Command(*bin, "--pty", "--", "true")))
	}
	p, t := median(plain), median(pty)
	row(fmt.Sprintf("PTY run overhead: `shellsup -- true` vs `shellsup --pty -- true` (%d runs)", *runs), ms(p), ms(t), fmt.Sprintf("%+.2f ms", float64(t-p)/float64(time.Millisecond)),
		"≤ +"+ms(ptyLimit), ptr(t-p <= ptyLimit))
}
