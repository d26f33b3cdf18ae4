package shellsup

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// leafWait bounds the wait for a killed cgroup leaf to empty, and then for
// its removal.
const leafWait = time.Second

// killLeaf kills every process in the cgroup leaf that a shellsup which
// died without totals named in its start frame, and removes the leaf. It
// touches only a directory named by shellsup ("shellsup-…") that has a
// cgroup.kill file, and says what it did.
func killLeaf(leaf string) string {
	if !filepath.IsAbs(leaf) || !strings.HasPrefix(filepath.Base(leaf), "shellsup-") || filepath.Clean(leaf) != leaf {
		return fmt.Sprintf("its cgroup %q is not a shellsup leaf, so Run left it alone", leaf)
	}
	// O_WRONLY without O_CREAT: only a real cgroup has the file.
	f, err := os.OpenFile(filepath.Join(leaf, "cgroup.kill"), os.O_WRONLY, 0)
	if err != nil {
		if os.IsNotExist(err) {
			return fmt.Sprintf("its cgroup leaf %s was already gone", leaf)
		}
		return fmt.Sprintf("Run could not kill its cgroup leaf %s: %v", leaf, err)
	}
	_, err = f.Write([]byte("1"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Sprintf("Run could not kill its cgroup leaf %s: %v", leaf, err)
	}
	deadline := time.Now().Add(leafWait)
	for populated(leaf) {
		if time.Now().After(deadline) {
			return fmt.Sprintf("Run killed its cgroup leaf %s, but it still held processes %v later", leaf, leafWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
	removed := "and removed it"
	for err := os.Remove(leaf); err != nil && !os.IsNotExist(err); err = os.Remove(leaf) {
		if time.Now().After(deadline.Add(leafWait)) {
			removed = "(the next shellsup start removes it)"
			break
		}
		time.Sleep(10 * time.Millisecond) // EBUSY while the last exits are accounted
	}
	return fmt.Sprintf("Run killed every process in its cgroup leaf %s %s: nothing is left in the leaf (a process the command moved out of it, where its cgroup allowed that: root, or the owner of a delegated cgroup, is not reached; PIDNamespace holds such a process too)", leaf, removed)
}

// populated reads "populated" from the leaf's cgroup.events; a leaf that is
// gone is empty.
func populated(leaf string) bool {
	b, err := os.ReadFile(filepath.Join(leaf, "cgroup.events"))
	if err != nil {
		return !os.IsNotExist(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return strings.TrimSpace(v) != "0"
		}
	}
	return true
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
	ctx, cancel := context.WithTimeout(context.Background(), sweepWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "sweep")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	text := strings.TrimSpace(strings.ReplaceAll(string(out), "shellsup: sweep: ", ""))
	text = strings.ReplaceAll(text, "\n", "; ")
	switch {
	case err != nil:
		return fmt.Sprintf("Run ran %s sweep, which failed (%v): %s", bin, err, text)
	case text == "no stale leaves":
		return "Run ran shellsup sweep: no cgroup leaf was left (no cgroup tier, or nothing ran in it)"
	default:
		return "Run ran shellsup sweep: " + text
	}
}
