package shellsup

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Request.Tidy passes --tidy, and the result carries what became of each
// stream's bytes: the same corpus text the Python and integration tests
// check, and a binary stream named as such.
func TestTidy(t *testing.T) {
	assert.Equal(t, []string{"--frames", "--timeout=120", "--pidns-auto", "--tidy", "--", "true"}, argvOf(t, Request{Command: "true", Tidy: true}))

	in, err := filepath.Abs("../../testdata/tidy/pip-download.in")
	require.NoError(t, err)
	want, err := os.ReadFile("../../testdata/tidy/pip-download.want")
	require.NoError(t, err)
	raw, err := os.ReadFile(in)
	require.NoError(t, err)
	req := newRequest(t, "cat '"+in+"'; printf 'x\\0y' >&2")
	req.Tidy = true
	res, err := Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, string(want), res.Stdout)
	assert.Equal(t, StreamText{TidiedBytes: int64(len(raw) - len(want))}, res.StdoutText)
	assert.Equal(t, "[binary output: 3 bytes; starts 78 00 79]\n", res.Stderr)
	assert.True(t, res.StderrText.Binary)

	req.Tidy = false
	res, err = Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "x\x00y", res.Stderr, "without Tidy the text is as decoded")
	assert.True(t, res.StderrText.Binary, "binary is reported without Tidy too")
	assert.Zero(t, res.StdoutText.TidiedBytes)
}
