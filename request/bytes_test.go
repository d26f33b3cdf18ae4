package request

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"1048576": 1 << 20, "512K": 512 << 10, "64M": 64 << 20, "1G": 1 << 30, "2g": 2 << 30, "64MiB": 64 << 20, "64MB": 64 << 20, " 1T ": 1 << 40} {
		got, err := ParseBytes(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "0", "-1", "1.5G", "G", "12X", "99999999999T"} {
		_, err := ParseBytes(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), "K, M, G or T")
	}
}
