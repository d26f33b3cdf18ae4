package shellsup

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadmeJobsExample: the README's Jobs example is ExampleStart, which
// go test compiles and runs.
func TestReadmeJobsExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, block, ok := strings.Cut(string(readme), "<!-- jobs-example -->\n```go\n")
	require.True(t, ok, "the README has no jobs-example block")
	block, _, ok = strings.Cut(block, "\n```\n")
	require.True(t, ok, "the jobs-example block is not closed")
	src, err := os.ReadFile("example_job_test.go")
	require.NoError(t, err)
	_, fn, ok := strings.Cut(string(src), "\nfunc ExampleStart() {")
	require.True(t, ok, "example_job_test.go has no ExampleStart")
	require.Equal(t, "func ExampleStart() {"+strings.TrimRight(fn, "\n"), block)
}

// TestPackageDocListsEveryPlace: `go doc` of the package lists the five
// places findBinary looks, in its order (the package comment once named 3).
func TestPackageDocListsEveryPlace(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	places := []string{"Request.Binary", "$SHELLSUP_BIN", "embedded.Init", "os.Executable", "in the absolute directories of $PATH"}
	rest := string(src)
	for i, place := range places {
		item := fmt.Sprintf("//  %d. ", i+1)
		_, after, ok := strings.Cut(rest, item)
		require.True(t, ok, "doc.go has no item %q", item)
		line, _, _ := strings.Cut(after, "\n//  ")
		require.Contains(t, line, place, "item %d", i+1)
		rest = after
	}
	assert.NotContains(t, string(src), "//  6. ")
}
