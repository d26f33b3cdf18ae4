package request

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{
		"1048576": 1 << 20, "512K": 512 << 10, "64M": 64 << 20, "1G": 1 << 30, "2g": 2 << 30, "64MiB": 64 << 20, "64MB": 64 << 20, " 1T ": 1 << 40,
		// One parser for every byte count: 0 is a byte count (each option
		// applies its own minimum), and 2^62 is the largest.
		"0": 0, "0K": 0, "512": 512, "4611686018427387904": MaxByteCount, "4194304T": MaxByteCount,
	} {
		got, err := ParseBytes(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "-1", "1.5G", "G", "12X", "99999999999T", "4611686018427387905", "4194305T", "9999999999999G"} {
		_, err := ParseBytes(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), "K, M, G or T", in)
		assert.Contains(t, err.Error(), "\""+in+"\"", in)
	}
}

func TestParseSpillMax(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "100K": 100 << 10, "64MiB": 64 << 20, "1T": 1 << 40} {
		got, err := ParseSpillMax(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"-1", "12X", "abc", ""} {
		_, err := ParseSpillMax(in)
		var ve *ValidationError
		require.ErrorAs(t, err, &ve, in)
		assert.Equal(t, "--spill-max must be "+ByteCountForm+", at least 0 and at most 2^62 (got \""+in+"\")", ve.Msg)
	}
}
