package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/decoder"
)

// TestAgentPreset: --agent turns on each of its defaults, and an option
// given on the command line as well wins, in either order.
func TestAgentPreset(t *testing.T) {
	type want struct {
		agentEnv, scrubEnv, tidy, noLogin bool
		capture                           decoder.Mode
	}
	all := want{agentEnv: true, scrubEnv: true, tidy: true, capture: decoder.HeadTail}
	rows := []struct {
		name string
		argv []string
		want want
	}{
		{"no --agent", nil, want{capture: decoder.Head}},
		{"--agent", []string{"--agent"}, all},
		{"--agent --capture head", []string{"--agent", "--capture", "head"}, want{agentEnv: true, scrubEnv: true, tidy: true, capture: decoder.Head}},
		{"--capture tail --agent", []string{"--capture=tail", "--agent"}, want{agentEnv: true, scrubEnv: true, tidy: true, capture: decoder.Tail}},
		{"--agent --scrub-env=false", []string{"--agent", "--scrub-env=false"}, want{agentEnv: true, tidy: true, capture: decoder.HeadTail}},
		{"--agent --agent-env=false", []string{"--agent", "--agent-env=false"}, want{scrubEnv: true, tidy: true, capture: decoder.HeadTail}},
		{"--agent --no-login", []string{"--agent", "--no-login"}, want{agentEnv: true, scrubEnv: true, tidy: true, noLogin: true, capture: decoder.HeadTail}},
		{"--agent=false", []string{"--agent=false"}, want{capture: decoder.Head}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			a, err := Parse(append(row.argv, "--", "true"))
			require.NoError(t, err)
			cfg, err := a.Validate()
			require.NoError(t, err)
			got := want{agentEnv: cfg.AgentEnv, scrubEnv: cfg.ScrubEnv, tidy: cfg.Tidy, noLogin: cfg.NoLogin, capture: cfg.Capture}
			assert.Equal(t, row.want, got)
		})
	}
}

// TestAgentInHelp: --help lists --agent and what it sets.
func TestAgentInHelp(t *testing.T) {
	for _, s := range []string{"--agent ", "--agent-env, --scrub-env,", "--tidy", "--capture head+tail", "login shell"} {
		assert.Contains(t, Usage, s)
	}
	_, err := Parse([]string{"--agnt", "--", "true"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `did you mean "--agent"?`)
}

// TestAgentSmallBudget: --agent's head+tail needs a budget the window can
// hold; the refusal names the capture.
func TestAgentSmallBudget(t *testing.T) {
	a, err := Parse([]string{"--agent", "--budget", "60", "--", "true"})
	require.NoError(t, err)
	_, err = a.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "for --agent's capture head+tail (got 60); add --capture head")
	a, err = Parse([]string{"--agent", "--budget", "60", "--capture", "head", "--", "true"})
	require.NoError(t, err)
	_, err = a.Validate()
	assert.NoError(t, err, "an explicit head capture takes any budget")
}
