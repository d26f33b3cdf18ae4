package shellsup

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLayoutListsEveryPackage: docs/layout.md has a row for every directory
// of the module that holds Go files (the Layout once left out environ/,
// redact/, spill/ and ports/).
func TestLayoutListsEveryPackage(t *testing.T) {
	raw, err := os.ReadFile("docs/layout.md")
	require.NoError(t, err)
	layout := string(raw)
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "node_modules") {
			return filepath.SkipDir
		}
		if path == "." || !hasGo(t, path) {
			return nil
		}
		assert.Contains(t, layout, "| `"+path+"` |", "docs/layout.md has no row for %s", path)
		return nil
	})
	require.NoError(t, err)
}

// hasGo reports whether dir holds a .go file.
func hasGo(t *testing.T, dir string) bool {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
			return true
		}
	}
	return false
}
