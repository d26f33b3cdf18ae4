package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
)

func TestMain(m *testing.M) {
	proctest.Main(m, proctest.Config{
		Builds: []proctest.Build{{Pkg: "./cmd/shellsup", Out: bin}},
		Home:   &home,
	})
}

// The table's counter sees what a tool leaves: timeout(1) leaves the setsid sleeper (counted,
// then killed by its token), shellsup leaves nothing; the flood cell is the bytes the caller got.
func TestMeasureCountsWhatEachToolLeaves(t *testing.T) {
	setsid, flood := shapes[0], shapes[5]
	require.Equal(t, "`setsid` sleeper", setsid.name)
	timeout, sup, binding := toolNamed(t, "`timeout"), toolNamed(t, "`shellsup"), toolNamed(t, "Go binding")
	require.Empty(t, timeout.missing)
	assert.Regexp(t, `^1 left · 0\.\d\d s$`, measure(timeout, setsid))
	assert.Regexp(t, `^0 left · 0\.\d\d s$`, measure(sup, setsid))
	assert.Regexp(t, `^64 KiB · \d\.\d\d s$`, measure(binding, flood))
	assert.Regexp(t, `^64 MiB · \d\.\d\d s$`, measure(timeout, flood))
}

// toolNamed is the tool of the table whose name begins with prefix.
func toolNamed(t *testing.T, prefix string) tool {
	for _, tl := range tools() {
		if strings.HasPrefix(tl.name, prefix) {
			return tl
		}
	}
	t.Fatalf("no tool named %s…", prefix)
	return tool{}
}

// A tool that is not installed gets a row saying so, and nothing is run.
func TestAbsentToolIsSkipped(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	tl := argvTool("x", "tini", []string{"tini"})
	assert.Equal(t, "tini is not installed", tl.missing)
	assert.Nil(t, tl.start)
}

func TestSize(t *testing.T) {
	assert.Equal(t, "64 MiB", size(64<<20))
	assert.Equal(t, "64 MiB + 100 B", size(64<<20+100))
	assert.Equal(t, "64 KiB", size(64<<10))
	assert.Equal(t, "7 B", size(7))
	assert.Equal(t, "?", size(-1))
}

// The README's table of the six commands is the shapes this program runs.
func TestTheReadmeListsEveryShape(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	for _, s := range shapes {
		assert.Contains(t, string(raw), "| "+s.name+" | `"+s.script+"` |")
	}
}

// A tool that fails before it runs the command is reported so, not as leaving nothing.
func TestAToolThatDidNotRunTheCommandIsSaidSo(t *testing.T) {
	sh := argvTool("sh", "sh", []string{"sh", "-c", "echo cannot make a namespace >&2; exit 1", "--"})
	require.Empty(t, sh.missing)
	assert.Equal(t, "did not run the command: cannot make a namespace", measure(sh, shapes[0]))
	assert.Equal(t, "did not run the command: cannot make a namespace", measure(sh, shapes[5]))
}
