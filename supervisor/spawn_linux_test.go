package supervisor

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestShellArgv(t *testing.T) {
	assert.Equal(t, []string{"/bin/bash", "-lc", "echo hi"}, shellArgv(Config{Command: "echo hi"}))
	assert.Equal(t, []string{"/bin/bash", "--norc", "-c", "echo hi"}, shellArgv(Config{Command: "echo hi", NoLogin: true}))
}
