package main

import (
	"fmt"
	"os"
	"os/exec"
	"time"
)

// sandboxLimit is the target: the sandbox adds at most this to a spawn.
const sandboxLimit = 1500 * time.Microsecond

// sandboxOverhead times `shellsup --sandbox MODE -- true` (and
// --no-network) against `shellsup -- true`, interleaved in one loop, so
// each row is the sandbox's own cost on top of the default tier.
func sandboxOverhead() {
	ws, err := os.MkdirTemp("", "shellsup-bench-ws-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(ws)
	modes := []struct {
		name string
		args []string
	}{
		{"`--sandbox read-only`", []string{"--sandbox", "read-only"}},
		{"`--sandbox workspace-write`", []string{"--sandbox", "workspace-write", "--workspace", ws}},
		{"`--no-network`", []string{"--no-network"}},
		{"`--sandbox read-only --no-network`", []string{"--sandbox", "read-only", "--no-network"}},
	}
	var base []time.Duration
	sup := make([][]time.Duration, len(modes))
	for i := 0; i < *runs; i++ {
		base = append(base, timeRun(exec.Command(*bin, "--cwd", ws, "--", "true")))
		for j, m := range modes {
			sup[j] = append(sup[j], timeRun(exec.Command(*bin, append(append([]string{"--cwd", ws}, m.args...), "--", "true")...)))
		}
	}
	b := median(base)
	for j, m := range modes {
		s := median(sup[j])
		row(fmt.Sprintf("spawn, %s: `shellsup -- true` vs the same sandboxed (%d runs)", m.name, *runs), ms(b), ms(s), fmt.Sprintf("%+.2f ms", float64(s-b)/float64(time.Millisecond)),
			"≤ +"+ms(sandboxLimit), ptr(s-b <= sandboxLimit))
	}
}
