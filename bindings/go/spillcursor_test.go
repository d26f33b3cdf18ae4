package shellsup

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpillCursorDecodesAcrossReads: a spill file read one byte at a time
// gives the text of the whole, a sequence split between reads included,
// and a sequence cut by the end of the finished file becomes one U+FFFD.
func TestSpillCursorDecodesAcrossReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stdout")
	raw := "a\u00e9\u20ac\U0001F600\xed\xa0b\xe2\x82"
	require.NoError(t, os.WriteFile(path, []byte(raw), 0o600))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var c spillCursor
	var got string
	for more := true; more; {
		text, m, _, err := c.next(f, 1, true)
		require.NoError(t, err)
		got, more = got+text, m
	}
	assert.Equal(t, "a\u00e9\u20ac\U0001F600\uFFFD\uFFFDb\uFFFD", got)
}
