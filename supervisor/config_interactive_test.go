package supervisor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidateInteractive(t *testing.T) {
	cfg, err := Args{Command: []string{"x"}, Interactive: InteractiveArgs{PTY: true}}.Validate()
	require.NoError(t, err)
	assert.Equal(t, InteractiveConfig{PTY: true, Cols: 80, Rows: 24}, cfg.InteractiveConfig)
	cfg, err = Args{Command: []string{"x"}, Interactive: InteractiveArgs{PTY: true, PTYSize: "132x50", IdleTimeout: "2500ms", StopOnInput: true}}.Validate()
	require.NoError(t, err)
	assert.Equal(t, InteractiveConfig{PTY: true, Cols: 132, Rows: 50, IdleTimeout: 2.5, StopOnInput: true}, cfg.InteractiveConfig)
	cfg, err = Args{Command: []string{"x"}, Interactive: InteractiveArgs{Stdin: "pipe"}}.Validate()
	require.NoError(t, err)
	assert.True(t, cfg.StdinPipe)
	assert.False(t, cfg.PTY)
}

func TestValidateInteractiveRefuses(t *testing.T) {
	for _, c := range []struct {
		in   InteractiveArgs
		want string
	}{
		{InteractiveArgs{PTYSize: "80x24"}, `--pty-size "80x24" needs --pty`},
		{InteractiveArgs{PTY: true, PTYSize: "80"}, `pty-size must be COLSxROWS, two whole numbers from 1 to 10000, e.g. 120x40 (got "80")`},
		{InteractiveArgs{PTY: true, PTYSize: "10001x5"}, `(got "10001x5")`},
		{InteractiveArgs{Stdin: "file"}, `stdin must be "null" or "pipe" (got "file")`},
		{InteractiveArgs{PTY: true, Stdin: "null"}, `exclude each other`},
		{InteractiveArgs{IdleTimeout: "0"}, `idle-timeout must be greater than 0 and at most 604800 seconds (got 0)`},
		{InteractiveArgs{IdleTimeout: "soon"}, `greater than 0 and at most 604800 seconds (got "soon")`},
		{InteractiveArgs{StopOnInput: true}, `--stop-on-input needs --pty`},
	} {
		_, err := Args{Command: []string{"x"}, Interactive: c.in}.Validate()
		require.Error(t, err, "%+v", c.in)
		assert.Contains(t, err.Error(), c.want)
	}
}
