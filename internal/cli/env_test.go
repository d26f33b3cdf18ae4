package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/request"
)

func TestParseEnvironmentOptions(t *testing.T) {
	a, err := Parse([]string{"--no-login", "--scrub-env", "-agent-env", "--workspace", "/w", "--", "x"})
	require.NoError(t, err)
	assert.True(t, a.NoLogin)
	assert.True(t, a.ScrubEnv)
	assert.True(t, a.AgentEnv)
	assert.Equal(t, "/w", a.Workspace)

	a, err = Parse([]string{"--", "x"})
	require.NoError(t, err)
	assert.False(t, a.NoLogin || a.ScrubEnv || a.AgentEnv)
	assert.Empty(t, a.Workspace)
}

// An empty --workspace is refused, not taken as "no workspace".
func TestParseRefusesAnEmptyWorkspace(t *testing.T) {
	for _, argv := range [][]string{{"--workspace", "", "--", "x"}, {"--workspace=", "--", "x"}} {
		_, err := Parse(argv)
		var ve *request.ValidationError
		require.ErrorAs(t, err, &ve, "%q", argv)
		assert.Equal(t, `workspace must be a directory (got "")`, ve.Msg)
	}
}

func TestParseEnvironmentFlagsTakeNoValue(t *testing.T) {
	_, err := Parse([]string{"--no-login=maybe", "--", "x"})
	var ve *request.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, ve.Msg, `option "--no-login" takes no value (got "maybe")`)
}

// --env-allow is repeatable; each value is kept as given, split and
// checked by Validate.
func TestParseEnvAllow(t *testing.T) {
	a, err := Parse([]string{"--env-allow", "A,B*", "-env-allow=C", "--", "x"})
	require.NoError(t, err)
	assert.Equal(t, []string{"A,B*", "C"}, a.EnvAllow)
	cfg, err := a.Validate()
	require.NoError(t, err)
	assert.Equal(t, []string{"A", "B*", "C"}, cfg.EnvAllow)

	a, err = Parse([]string{"--env-allow", "A,X=1", "--", "x"})
	require.NoError(t, err)
	_, err = a.Validate()
	assert.ErrorContains(t, err, `(got "X=1")`)
}
