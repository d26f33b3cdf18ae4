package shellsup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// killLeaf kills every process in the cgroup leaf that a shellsup which
// died without totals named in its start frame, and removes the leaf, by
// `shellsup sweep --cgroup PARENT` (the binary's one implementation, which
// the Python binding calls too): once shellsup is reaped its leaf is stale.
// It touches only a directory named by shellsup ("shellsup-…"), and says
// what it did.
func killLeaf(bin string, env []string, leaf string) string {
	if !filepath.IsAbs(leaf) || !strings.HasPrefix(filepath.Base(leaf), "shellsup-") || filepath.Clean(leaf) != leaf {
		return fmt.Sprintf("its cgroup %q is not a shellsup leaf, so Run left it alone", leaf)
	}
	if _, err := os.Stat(leaf); os.IsNotExist(err) {
		return fmt.Sprintf("its cgroup leaf %s was already gone", leaf)
	}
	text, err := runSweep(bin, env, "--cgroup="+filepath.Dir(leaf))
	var mine string
	for _, line := range strings.Split(text, "; ") {
		if strings.HasSuffix(line, " "+leaf+" and removed it") {
			mine, _, _ = strings.Cut(line, " in ")
		}
	}
	if _, serr := os.Stat(leaf); !os.IsNotExist(serr) {
		return fmt.Sprintf("Run ran shellsup sweep for its cgroup leaf %s, which is left (%v): %s", leaf, err, text)
	}
	if mine == "" {
		return fmt.Sprintf("its cgroup leaf %s was already gone (another shellsup's sweep removed it)", leaf)
	}
	return fmt.Sprintf("Run killed every process in its cgroup leaf %s and removed it (shellsup sweep %s): nothing is left in the leaf (a process the command moved out of it, where its cgroup allowed that: root, or the owner of a delegated cgroup, is not reached; PIDNamespace holds such a process too)", leaf, mine)
}

// sweepWait bounds `shellsup sweep`.
const sweepWait = 5 * time.Second

// sweepLeaves runs `shellsup sweep` for a shellsup that died before its
// start frame named its cgroup leaf (the command can SIGKILL it that soon):
// the leaf, named after a shellsup that is gone, is stale, and the sweep
// kills what is in it and removes it, with any other stale leaf. Call it
// once shellsup has been reaped (a zombie's leaf is not stale yet). It says
// what the sweep did.
func sweepLeaves(bin string, env []string) string {
	text, err := runSweep(bin, env)
	switch {
	case err != nil:
		return fmt.Sprintf("Run ran %s sweep, which failed (%v): %s", bin, err, text)
	case text == "no stale leaves":
		return "Run ran shellsup sweep: no cgroup leaf was left (no cgroup tier, or nothing ran in it)"
	default:
		return "Run ran shellsup sweep: " + text
	}
}

// runSweep runs `shellsup sweep ARGS...` and returns its lines, joined by
// "; ", without their "shellsup: sweep: " prefix.
func runSweep(bin string, env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sweepWait)
	defer cancel()
	cmd := supervisorCommand(ctx, bin, append([]string{"sweep"}, args...)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	text := strings.TrimSpace(strings.ReplaceAll(string(out), "shellsup: sweep: ", ""))
	return strings.ReplaceAll(text, "\n", "; "), err
}
