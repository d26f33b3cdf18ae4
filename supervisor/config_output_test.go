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
)

// TestSpillMaxUsesTheOneByteParser: --spill-max is read by
// request.ParseSpillMax (request.ParseBytes, at least 0). Where the old
// parser of this file and ParseBytes disagreed, the rule that won is
// ParseBytes's: T and a trailing B or iB are accepted, and the largest
// count is 2^62.
func TestSpillMaxUsesTheOneByteParser(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spill")
	require.NoError(t, os.Mkdir(dir, 0o700))
	for s, want := range map[string]int64{"0": 0, "512": 512, "64K": 64 << 10, "64M": 64 << 20, "2G": 2 << 30, "3k": 3 << 10, " 7m ": 7 << 20,
		"1T": 1 << 40, "64MiB": 64 << 20, "1MB": 1 << 20} {
		cfg, err := Args{Command: []string{"x"}, Output: OutputArgs{Spill: dir, SpillMax: s}}.Validate()
		require.NoError(t, err, s)
		assert.Equal(t, want, cfg.SpillMax, s)
	}
	for _, s := range []string{"", "M", "-1", "1.5M", "12X", "9999999999999G", "abc"} {
		_, err := Args{Command: []string{"x"}, Output: OutputArgs{Spill: dir, SpillMax: s}}.Validate()
		if s == "" {
			continue // "" is the flag not given
		}
		var ve *request.ValidationError
		require.ErrorAs(t, err, &ve, s)
		assert.Contains(t, ve.Msg, "--spill-max must be", s)
		assert.Contains(t, ve.Msg, "(got \""+s+"\")")
	}
}

func TestLifetimeOption(t *testing.T) {
	for s, want := range map[string]float64{"1": 1, "30s": 30, "7d": 604800} {
		cfg, err := Args{Command: []string{"x"}, Output: OutputArgs{Lifetime: s}}.Validate()
		require.NoError(t, err, s)
		assert.Equal(t, request.Deadline{Kind: request.KindLifetime, Seconds: want}, cfg.Deadline, s)
	}
	for _, s := range []string{"0", "8d", "abc"} {
		_, err := Args{Command: []string{"x"}, Output: OutputArgs{Lifetime: s}}.Validate()
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
	assert.Equal(t, request.Deadline{Kind: request.KindLifetime, Seconds: 3600}, cfg.Deadline, "a lifetime is the deadline")
	assert.Equal(t, 3600.0, cfg.lifetime())
	assert.True(t, cfg.Redacts)
	assert.Len(t, cfg.Redact, len(redact.Builtin())+1)
	assert.True(t, cfg.Quiet)

	cfg, err = Args{Command: []string{"x"}, Output: OutputArgs{Spill: dir}}.Validate()
	require.NoError(t, err)
	assert.Equal(t, int64(request.DefaultSpillMax), cfg.SpillMax)
	assert.Empty(t, cfg.Redact)
	assert.Zero(t, cfg.lifetime())
	assert.Equal(t, request.KindTimeout, cfg.Deadline.Kind)
}
