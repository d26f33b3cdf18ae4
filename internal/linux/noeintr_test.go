package linux

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoEINTRLoopOutsideThisPackage: every shipped .go file of the module
// (tests aside) is parsed, and no loop outside internal/linux may name
// EINTR (unix.EINTR, syscall.EINTR or a bare EINTR): a retry is one of this
// package's wrappers.
func TestNoEINTRLoopOutsideThisPackage(t *testing.T) {
	root := moduleRoot(t)
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == filepath.Join("internal", "linux") || rel == "bin" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		found = append(found, eintrLoops(t, rel, src)...)
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, found, "EINTR retried by hand (use an internal/linux wrapper)")
}

// TestEINTRLoopsAreFound: the check sees the shapes the old code had.
func TestEINTRLoopsAreFound(t *testing.T) {
	src := `package p
func a() { for { _, err := unix.Poll(nil, -1); if err == unix.EINTR { continue }; return } }
func b() { for { if !errors.Is(f(), syscall.EINTR) { break } } }
func c() { for { switch err := f(); { case err == EINTR: continue }; return } }
func d() error { if err := f(); err == unix.EINTR { return nil }; return nil }
`
	assert.Len(t, eintrLoops(t, "p.go", []byte(src)), 3, "a, b and c loop; d does not")
}

// eintrLoops lists, as file:line, each EINTR named inside a loop of src.
func eintrLoops(t *testing.T, name string, src []byte) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	require.NoError(t, err, "parsing %s", name)
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		var body *ast.BlockStmt
		switch l := n.(type) {
		case *ast.ForStmt:
			body = l.Body
		case *ast.RangeStmt:
			body = l.Body
		default:
			return true
		}
		ast.Inspect(body, func(m ast.Node) bool {
			if id, ok := m.(*ast.Ident); ok && id.Name == "EINTR" {
				out = append(out, fset.Position(id.Pos()).String())
			}
			return true
		})
		return false // an inner loop is already inside this one
	})
	return out
}

// moduleRoot is the directory of go.mod above the working directory.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the working directory")
		dir = parent
	}
}
