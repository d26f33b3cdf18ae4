package procstat

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statReaders may name a stat file: the reaper's scan reads it with bare
// syscalls (a cleanup reads every process several times) and hands the
// bytes to Parse; its start-up check names it in an error.
var statReaders = map[string]bool{"reaper/scan_linux.go": true, "reaper/check_linux.go": true}

// TestOneStatParser: no Go file of the module but this package's cuts a
// stat line at its ')' (the end of the command name, where a hand parser
// starts), tests included; no shipped file but statReaders names a
// /proc/PID/stat file.
func TestOneStatParser(t *testing.T) {
	root := moduleRoot(t)
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == filepath.Join("internal", "procstat") || rel == "bin" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		shipped := !strings.HasSuffix(path, "_test.go") && !statReaders[filepath.ToSlash(rel)]
		found = append(found, statParsers(t, rel, src, shipped)...)
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, found, "/proc/PID/stat parsed by hand (use internal/procstat)")
}

// TestStatParsersAreFound: the check sees the shapes the old parsers had.
func TestStatParsersAreFound(t *testing.T) {
	src := `package p
func a(b []byte) int { return bytes.LastIndexByte(b, ')') }
func b(s string) { _, rest, _ := strings.Cut(s, ") "); _ = rest }
func c(pid int) { os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat") }
func d(p string) { os.ReadFile(filepath.Join(p, "self", "stat")) }
func e(s string) int { return strings.LastIndexByte(s, '(') }
`
	assert.Len(t, statParsers(t, "p.go", []byte(src), true), 4, "a to d; e is no parser")
	assert.Len(t, statParsers(t, "p_test.go", []byte(src), false), 2, "a and b in a test")
}

// statParsers lists, as file:line, each cut at ')' in src and, with
// paths, each string literal naming a stat file.
func statParsers(t *testing.T, name string, src []byte, paths bool) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	require.NoError(t, err, "parsing %s", name)
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && cutters[sel.Sel.Name] {
				for _, arg := range n.Args {
					if lit, ok := arg.(*ast.BasicLit); ok && (lit.Value == "')'" || lit.Value == `")"` || lit.Value == `") "`) {
						out = append(out, fset.Position(lit.Pos()).String())
					}
				}
			}
		case *ast.BasicLit:
			if v, err := strconv.Unquote(n.Value); paths && n.Kind == token.STRING && err == nil && (v == "/stat" || v == "stat") {
				out = append(out, fset.Position(n.Pos()).String())
			}
		}
		return true
	})
	return out
}

// cutters are the functions of strings and bytes a hand parser finds the
// end of the command name with.
var cutters = map[string]bool{
	"LastIndex": true, "LastIndexByte": true, "LastIndexAny": true, "Index": true, "IndexByte": true,
	"Cut": true, "Split": true, "SplitN": true, "SplitAfter": true,
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
