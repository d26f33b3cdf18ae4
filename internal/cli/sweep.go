package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/shellsup/shellsup/cgroup"
	"github.com/shellsup/shellsup/sandbox"
)

// sweep is `shellsup sweep [--cgroup PATH]`: it kills and removes the
// stale leaf cgroups (those of shellsups that are gone) and prints one line
// per leaf removed, and one per leaf left alone because it was made in
// another PID namespace or boot; it removes the private TMPDIRs of stale
// shellsups too (sandbox runs), a line each. It exits 0 when every stale
// leaf and TMPDIR is gone, 125 when some could not be removed or the
// command line is wrong.
func sweep(argv []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("shellsup sweep", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	parent := fs.String("cgroup", "", "")
	if err := fs.Parse(argv); err != nil || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "shellsup: usage is shellsup sweep [--cgroup PATH]")
		return 125
	}
	code := sweepTmp(stdout, stderr)
	h, err := cgroup.Discover()
	if err != nil {
		fmt.Fprintln(stderr, "shellsup: sweep:", err)
		return 125
	}
	swept, err := cgroup.Sweep(h, *parent)
	removed := 0
	for _, s := range swept {
		if s.Left != "" {
			fmt.Fprintf(stdout, "shellsup: sweep: left %s alone: %s\n", s.Path, s.Left)
			continue
		}
		removed++
		fmt.Fprintf(stdout, "shellsup: sweep: killed %d processes in %s and removed it\n", s.Killed, s.Path)
	}
	if err != nil {
		fmt.Fprintln(stderr, "shellsup: sweep:", err)
		return 125
	}
	if removed == 0 {
		fmt.Fprintln(stdout, "shellsup: sweep: no stale leaves")
	}
	return code
}

// sweepTmp removes the private TMPDIRs of stale shellsups, judged as their
// leaves are, a line each; 125 if some could not be removed.
func sweepTmp(stdout, stderr io.Writer) int {
	stale, err := cgroup.StaleTags("/proc")
	if err != nil {
		fmt.Fprintln(stderr, "shellsup: sweep:", err)
		return 125
	}
	swept, err := sandbox.SweepTmp(stale)
	for _, s := range swept {
		fmt.Fprintf(stdout, "shellsup: sweep: removed the private TMPDIR %s (%d entries)\n", s.Path, s.Removed)
	}
	if err != nil {
		fmt.Fprintln(stderr, "shellsup: sweep:", err)
		return 125
	}
	return 0
}
