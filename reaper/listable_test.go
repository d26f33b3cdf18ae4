//go:build linux

package reaper

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListableReadsOnToTheFirstProcess: listable reads a directory a few
// entries at a time; a process entry after many more fixed entries than
// one read returns is still found, and a directory with none is refused.
func TestListableReadsOnToTheFirstProcess(t *testing.T) {
	withFixed := func(n int, pid bool) string {
		dir := t.TempDir()
		for i := range n {
			require.NoError(t, os.Mkdir(filepath.Join(dir, fmt.Sprintf("fixed-entry-%03d", i)), 0o755))
		}
		if pid {
			require.NoError(t, os.Mkdir(filepath.Join(dir, "4242"), 0o755))
		}
		return dir
	}
	assert.NoError(t, (&procDir{root: withFixed(0, true)}).listable(), "a process only")
	assert.NoError(t, (&procDir{root: withFixed(300, true)}).listable(), "a process after 300 fixed entries (~10 KiB)")
	assert.ErrorContains(t, (&procDir{root: withFixed(300, false)}).listable(), "no process entries")
	assert.ErrorContains(t, (&procDir{root: t.TempDir()}).listable(), "no process entries")
	assert.Error(t, (&procDir{root: "/no/such/proc"}).listable())
	assert.NoError(t, (&procDir{root: "/proc"}).listable())
}
