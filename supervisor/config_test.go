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
		{"timeout abc", Args{Timeout: "abc"}, `timeout must be a number of seconds greater than 0 and at most 600 (got "abc")`},
		{"timeout empty-ish", Args{Timeout: " "}, `(got " ")`},
		{"grace -0.1", Args{Grace: "-0.1"}, "grace must be at least 0 and at most 60 seconds (got -0.1)"},
		{"grace 61", Args{Grace: "61"}, "(got 61)"},
		{"budget -1", Args{Budget: "-1"}, "budget must be at least 52 and at most 524288 bytes (got -1)"},
		{"budget 51", Args{Budget: "51"}, "(got 51)"},
		{"budget 524289", Args{Budget: "524289"}, "(got 524289)"},
		{"budget 1.5", Args{Budget: "1.5"}, `budget must be a whole number of bytes, at least 52 and at most 524288 (got "1.5")`},
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
