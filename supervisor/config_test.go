package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/request"
)

func TestValidateDefaults(t *testing.T) {
	cfg, err := Args{Command: []string{"true"}}.Validate()
	require.NoError(t, err)
	wd, _ := os.Getwd()
	assert.Equal(t, Config{Command: "true", Cwd: wd, Dir: wd, Deadline: request.Deadline{Kind: request.KindTimeout, Seconds: 120}, Budget: 65536, Grace: 2}, cfg)
}

func TestValidateAccepts(t *testing.T) {
	dir := t.TempDir()
	cfg, err := Args{Timeout: "0.05", Grace: "0", Budget: "52", Cwd: dir, Frames: true, Command: []string{"x"}}.Validate()
	require.NoError(t, err)
	assert.Equal(t, request.Deadline{Kind: request.KindTimeout, Seconds: 0.05}, cfg.Deadline)
	assert.Equal(t, 0.0, cfg.Grace)
	assert.Equal(t, 52, cfg.Budget)
	assert.Equal(t, dir, cfg.Cwd)
	cfg, err = Args{Timeout: "600", Budget: "524288", Cwd: ".", Command: []string{"x"}}.Validate()
	require.NoError(t, err)
	wd, _ := os.Getwd()
	assert.Equal(t, wd, cfg.Cwd, "relative cwd resolved against shellsup's own")
}

// One duration parser for every time option and one byte-count parser for
// every byte option: --timeout 2s, --grace 1s, --budget 64K, as
// --lifetime 2m and --max-memory 64M.
func TestValidateReadsDurationsAndSizes(t *testing.T) {
	cfg, err := Args{Timeout: "2s", Grace: "500ms", Budget: "64K", MaxMemory: "64M", Command: []string{"x"}}.Validate()
	require.NoError(t, err)
	assert.Equal(t, 2.0, cfg.Deadline.Seconds)
	assert.Equal(t, 0.5, cfg.Grace)
	assert.Equal(t, 64<<10, cfg.Budget)
	assert.EqualValues(t, 64<<20, cfg.MaxMemory)
	for in, want := range map[string]float64{"1.5": 1.5, "1m": 60, "10m": 600, "0.1h": 360, "250ms": 0.25} {
		cfg, err := Args{Timeout: in, Command: []string{"x"}}.Validate()
		require.NoError(t, err, in)
		assert.InDelta(t, want, cfg.Deadline.Seconds, 1e-9, in)
	}
	cfg, err = Args{Budget: "512K", Grace: "1m", Command: []string{"x"}, Output: OutputArgs{Lifetime: "1h30m", Spill: t.TempDir(), SpillMax: "1M"}}.Validate()
	require.NoError(t, err)
	assert.Equal(t, 512<<10, cfg.Budget)
	assert.Equal(t, 60.0, cfg.Grace)
	assert.Equal(t, request.Deadline{Kind: request.KindLifetime, Seconds: 5400}, cfg.Deadline)
	assert.EqualValues(t, 1<<20, cfg.SpillMax)
}

func TestValidateRefuses(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	rows := []struct {
		name string
		args Args
		msg  string
	}{
		{"no command", Args{}, "missing COMMAND"},
		{"two arguments", Args{Command: []string{"echo", "hi"}}, `quote it: shellsup -- "echo hi"`},
		{"empty command", Args{Command: []string{""}}, `command must be a non-empty string (got "")`},
		{"invalid UTF-8 command", Args{Command: []string{"echo \xff"}}, `command must be valid UTF-8 (got "echo \xff")`},
		{"command over the limit", Args{Command: []string{strings.Repeat("x", 131072)}}, "command is 131072 bytes; the kernel passes at most 131072 bytes"},
		{"timeout 0", Args{Timeout: "0"}, "timeout must be greater than 0 and at most 600 seconds (got 0)"},
		{"timeout -1", Args{Timeout: "-1"}, "(got -1)"},
		{"timeout 600.001", Args{Timeout: "600.001"}, "(got 600.001)"},
		{"timeout nan", Args{Timeout: "nan"}, "(got nan)"},
		{"timeout inf", Args{Timeout: "inf"}, "(got inf)"},
		{"timeout -inf", Args{Timeout: "-inf"}, "(got -inf)"},
		{"timeout 1e999", Args{Timeout: "1e999"}, "(got 1e999)"},
		{"timeout abc", Args{Timeout: "abc"}, `timeout must be a duration greater than 0 and at most 600 seconds, written as a number of seconds (1.5) or a number with a unit ms, s, m, h or d (500ms, 2s, 1m, 1h30m, 7d) (got "abc")`},
		{"timeout 601 points to --lifetime", Args{Timeout: "601"}, "(got 601); a longer run is a job: give it a lifetime instead (--lifetime"},
		{"timeout 11m", Args{Timeout: "11m"}, "(got 11m); a longer run is a job"},
		{"timeout 2 s", Args{Timeout: "2 s"}, `(got "2 s")`},
		{"grace 1w", Args{Grace: "1w"}, `grace must be a duration at least 0 and at most 60 seconds, written as a number of seconds (1.5) or a number with a unit`},
		{"grace 2m", Args{Grace: "2m"}, "grace must be at least 0 and at most 60 seconds (got 2m)"},
		{"budget 1M", Args{Budget: "1M"}, "budget must be at least 52 and at most 524288 bytes (got 1M)"},
		{"budget 9999999T", Args{Budget: "9999999T"}, `(got "9999999T")`},
		{"timeout empty-ish", Args{Timeout: " "}, `(got " ")`},
		{"grace -0.1", Args{Grace: "-0.1"}, "grace must be at least 0 and at most 60 seconds (got -0.1)"},
		{"grace 61", Args{Grace: "61"}, "(got 61)"},
		{"budget -1", Args{Budget: "-1"}, "budget must be at least 52 and at most 524288 bytes (got -1)"},
		{"budget 51", Args{Budget: "51"}, "(got 51)"},
		{"budget 524289", Args{Budget: "524289"}, "(got 524289)"},
		{"budget 1.5", Args{Budget: "1.5"}, `budget must be a whole number of bytes, optionally with a K, M, G or T suffix (powers of 1024; a trailing B or iB is allowed), e.g. 64M, at least 52 and at most 524288 bytes (got "1.5")`},
		{"missing cwd", Args{Cwd: "/no/such"}, `cwd "/no/such" does not exist`},
		{"file cwd", Args{Cwd: file}, "is not a directory"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			if row.args.Command == nil && row.name != "no command" {
				row.args.Command = []string{"true"}
			}
			_, err := row.args.Validate()
			var ve *request.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Contains(t, ve.Msg, row.msg)
		})
	}
}
