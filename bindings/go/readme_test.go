package shellsup

import (
	"os"
	"strings"
	"testing"

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
