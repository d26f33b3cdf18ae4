package cli

import (
	"errors"
	"flag"
	"strconv"
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

// The COMMAND follows "--": a word before it is refused, a typo of a
// subcommand or an option with a "did you mean".
func TestParseRequiresDoubleDash(t *testing.T) {
	rows := map[string][]string{
		`unknown word "decod": did you mean "decode"?`:                                                                {"decod"},
		`unknown word "swep": did you mean "sweep"?`:                                                                  {"swep"},
		`unknown word "version": did you mean "--version"?`:                                                           {"version"},
		`"decode" is a subcommand: it comes first, as in shellsup decode; a COMMAND follows --`:                       {"--frames", "decode"},
		`unknown word "help": did you mean "--help"?`:                                                                 {"help"},
		`unknown option "--timout": did you mean "--timeout"?`:                                                        {"--timout", "5", "--", "x"},
		`unknown option "-lifetme": did you mean "--lifetime"?`:                                                       {"-lifetme=1h", "--", "x"},
		`"echo hi" is not an option or a subcommand: the COMMAND follows --, as in shellsup [options] -- "echo hi"`:   {"--timeout", "5", "echo hi"},
		`"echo" "hi" is not an option or a subcommand: the COMMAND follows --, as in shellsup [options] -- "echo hi"`: {"echo", "hi"},
	}
	for want, argv := range rows {
		_, err := Parse(argv)
		var ve *request.ValidationError
		require.True(t, errors.As(err, &ve), "%v: %v", argv, err)
		assert.Contains(t, ve.Msg, want, "%v", argv)
		assert.Contains(t, ve.Msg, "see shellsup --help", "%v", argv)
	}
	a, err := Parse([]string{"--timeout", "2s", "--", "decod"})
	require.NoError(t, err, "after -- any word is the command")
	assert.Equal(t, []string{"decod"}, a.Command)
}

func TestClosest(t *testing.T) {
	words := []string{"decode", "sweep", "--timeout", "--grace", "--cgroup", "--no-cgroup"}
	for typed, want := range map[string]string{
		"decod": "decode", "decoed": "decode", "sweeep": "sweep", "timeout": "--timeout", "--tiemout": "--timeout",
		"grce": "--grace", "ls": "", "make": "", "": "", "--": "", "cgroups": "--cgroup", "xyzzy": "",
	} {
		assert.Equal(t, want, closest(typed, words), "%q", typed)
	}
}

// One form per kind of value, on the command line as parsed and validated:
// every time option takes a DURATION, every byte option a BYTES count, and
// the help names no other form (a new time option reads
// request.ParseDuration, a new byte option request.ParseBytes).
func TestOneFormPerKind(t *testing.T) {
	assert.NotContains(t, Usage, "SECONDS", "a time option takes a DURATION")
	spill := t.TempDir()
	for _, argv := range [][]string{
		{"--timeout", "2s"}, {"--timeout", "1.5"}, {"--timeout", "500ms"}, {"--timeout", "1m"},
		{"--grace", "1s"}, {"--grace", "0"}, {"--lifetime", "2m"}, {"--lifetime", "1h30m"},
		{"--budget", "64K"}, {"--budget", "65536"}, {"--max-memory", "64M"},
		{"--spill", spill, "--spill-max", "1M"},
	} {
		a, err := Parse(append(argv, "--", "true"))
		require.NoError(t, err, "%v", argv)
		_, err = a.Validate()
		assert.NoError(t, err, "%v", argv)
	}
	for _, argv := range [][]string{{"--timeout", "2 s"}, {"--grace", "1w"}, {"--lifetime", "soon"}, {"--budget", "64Q"}, {"--max-memory", "1.5G"}} {
		a, err := Parse(append(argv, "--", "true"))
		require.NoError(t, err, "%v", argv)
		_, err = a.Validate()
		var ve *request.ValidationError
		require.ErrorAs(t, err, &ve, "%v", argv)
		assert.Contains(t, ve.Msg, strconv.Quote(argv[1]), "the value is quoted")
	}
}
