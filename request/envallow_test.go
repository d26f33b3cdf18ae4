package request

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSplitEnvAllow(t *testing.T) {
	names, err := SplitEnvAllow("FOO,LC_*,npm_config_x")
	require.NoError(t, err)
	assert.Equal(t, []string{"FOO", "LC_*", "npm_config_x"}, names)
	for _, bad := range []string{"", ",", "A,", ",A", "A,,B", "A=1", "A B", "A\tB", "A\x00B", "A\nB", "*", "A*B", "A**", "\xff", "A\u00a0B"} {
		_, err := SplitEnvAllow(bad)
		var ve *ValidationError
		require.ErrorAs(t, err, &ve, "%q", bad)
		assert.Contains(t, ve.Msg, "env-allow names must be", "%q", bad)
	}
	_, err = SplitEnvAllow("OK,A=1")
	assert.ErrorContains(t, err, `"A=1"`)
}
