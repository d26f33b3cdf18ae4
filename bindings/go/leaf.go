package shellsup

import (
	"fmt"
	"os"
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
	return fmt.Sprintf("Run killed every process in its cgroup leaf %s %s: nothing is left", leaf, removed)
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
