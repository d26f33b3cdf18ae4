package request

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLifetime(t *testing.T) {
	for s, want := range map[string]float64{"1": 1, "0.25": 0.25, "30s": 30, "2m": 120, "1h": 3600, "7d": 604800, "604800": 604800, " 90 ": 90} {
		got, err := ParseLifetime(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
	}
	for s, msg := range map[string]string{
		"0": "lifetime must be greater than 0 and at most 604800 seconds (7 days) (got 0)", "-1": "(got -1)", "0s": "(got 0s)",
		"604801": "(got 604801)", "8d": "(got 8d)", "nan": "(got nan)", "inf": "(got inf)", "-inf": "(got -inf)", "1e999": "(got 1e999)",
		"":  `lifetime must be a duration greater than 0 and at most 604800 seconds (7 days), written as ` + DurationForm + ` (got "")`,
		"s": `(got "s")`, "1w": `(got "1w")`, "abc": `(got "abc")`,
	} {
		_, err := ParseLifetime(s)
		var ve *ValidationError
		require.ErrorAs(t, err, &ve, s)
		assert.Contains(t, ve.Msg, msg, s)
	}
}

func TestValidateLifetime(t *testing.T) {
	require.NoError(t, ValidateLifetime(MaxLifetime, "7d"))
	require.NoError(t, ValidateLifetime(DefaultLifetime, "1h"))
	assert.EqualError(t, ValidateLifetime(MaxLifetime+0.5, "604800.5"), "lifetime must be greater than 0 and at most 604800 seconds (7 days) (got 604800.5)")
}
