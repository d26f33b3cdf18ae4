package supervisor

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/redact"
	"github.com/shellsup/shellsup/request"
	"github.com/shellsup/shellsup/spill"
)

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{"0": 0, "512": 512, "64K": 64 << 10, "64M": 64 << 20, "2G": 2 << 30, "3k": 3 << 10, " 7m ": 7 << 20} {
		got, err := parseSize(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "M", "-1", "1.5M", "1T", "1MB", "9999999999999G", "abc"} {
		_, err := parseSize(s)
		var ve *request.ValidationError
		require.ErrorAs(t, err, &ve, s)
		assert.Contains(t, ve.Msg, "(got \""+s+"\")")
	}
}

func TestParseLifetime(t *testing.T) {
	for s, want := range map[string]float64{"1": 1, "0.25": 0.25, "30s": 30, "2m": 120, "1h": 3600, "7d": 604800, "604800": 604800} {
		got, err := parseLifetime(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
	}
	for _, s := range []string{"0", "-1", "0s", "604801", "8d", "nan", "inf", "-inf", "1e999", "", "s", "1w", "abc"} {
		_, err := parseLifetime(s)
		var ve *request.ValidationError
		require.ErrorAs(t, err, &ve, s)
		assert.Contains(t, ve.Msg, "lifetime must be")
	}
}

func TestValidateOutputOptions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spill")
	require.NoError(t, os.Mkdir(dir, 0o700))
	cfg, err := Args{Command: []string{"x"}, Output: OutputArgs{
		Spill: dir, SpillMax: "1M", Capture: "head+tail", Lifetime: "1h", RedactPatterns: []string{"sk-[0-9]+"}, Quiet: true,
	}}.Validate()
	require.NoError(t, err)
	assert.Equal(t, dir, cfg.SpillDir)
	assert.Equal(t, int64(1<<20), cfg.SpillMax)
	assert.Equal(t, decoder.HeadTail, cfg.Capture)
	assert.Equal(t, 3600.0, cfg.Lifetime)
	assert.Equal(t, 3600.0, cfg.Timeout, "a lifetime replaces the timeout")
	assert.True(t, cfg.Redacts)
	assert.Len(t, cfg.Redact, len(redact.Builtin)+1)
	assert.True(t, cfg.Quiet)

	cfg, err = Args{Command: []string{"x"}, Output: OutputArgs{Spill: dir}}.Validate()
	require.NoError(t, err)
	assert.Equal(t, int64(spill.DefaultMax), cfg.SpillMax)
	assert.Empty(t, cfg.Redact)
	assert.Zero(t, cfg.Lifetime)
}
