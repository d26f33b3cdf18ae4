package cli

import (
	"errors"
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/request"
)

func TestParseOptionsAndCommand(t *testing.T) {
	a, err := Parse([]string{"--timeout", "5", "-cwd=/tmp", "--budget=100", "--grace", "0", "--frames", "--", "echo hi"})
	require.NoError(t, err)
	assert.Equal(t, "5", a.Timeout)
	assert.Equal(t, "/tmp", a.Cwd)
	assert.Equal(t, "100", a.Budget)
	assert.Equal(t, "0", a.Grace)
	assert.True(t, a.Frames)
	assert.Equal(t, []string{"echo hi"}, a.Command)
}

func TestParseHelpAndVersion(t *testing.T) {
	_, err := Parse([]string{"--help"})
	assert.ErrorIs(t, err, flag.ErrHelp)
	_, err = Parse([]string{"-version"})
	assert.ErrorIs(t, err, ErrVersion)
}

// A bad option keeps the spelling the user typed, and --frames is honoured
// even then, so the error goes out as a frame.
func TestParseQuotesOptionsAsTyped(t *testing.T) {
	rows := map[string][]string{
		`unknown option "-V"`:                                    {"-V"},
		`unknown option "--V"`:                                   {"--V"},
		`unknown option "--nope"`:                                {"--frames", "--nope=1", "--", "x"},
		`option "--timeout" needs a value`:                       {"--timeout"},
		`option "-grace" needs a value`:                          {"-grace"},
		`malformed option "---x" (write --name or --name=value)`: {"---x"},
		`option "--frames" takes no value (got "yes")`:           {"--frames=yes"},
	}
	for want, argv := range rows {
		a, err := Parse(argv)
		var ve *request.ValidationError
		require.True(t, errors.As(err, &ve), "%v: %v", argv, err)
		assert.Contains(t, ve.Msg, want, "%v", argv)
		assert.Contains(t, ve.Msg, "; see shellsup --help")
		if argv[0] == "--frames" {
			assert.True(t, a.Frames)
		}
	}
}

// An option-like word after "--" is the command, not an option.
func TestParseStopsAtDoubleDash(t *testing.T) {
	a, err := Parse([]string{"--", "-V"})
	require.NoError(t, err)
	assert.Equal(t, []string{"-V"}, a.Command)
}
