package environ

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestScrubDropsCredentialNames(t *testing.T) {
	env := []string{"PATH=/bin", "GITHUB_TOKEN=ghp_x", "AWS_ACCESS_KEY_ID=AKIA", "MY_API_KEY=k",
		"DB_PASSWORD=p", "npm_token=t", "HOME=/h", "KEYBOARD=us", "TOKENIZER=bpe", "SSH_AUTH_SOCK=/s"}
	out, dropped := Build(env, Options{Scrub: true})
	assert.Equal(t, []string{"PATH=/bin", "HOME=/h", "KEYBOARD=us", "TOKENIZER=bpe"}, out)
	assert.Equal(t, []string{"AWS_ACCESS_KEY_ID", "DB_PASSWORD", "GITHUB_TOKEN", "MY_API_KEY", "SSH_AUTH_SOCK", "npm_token"}, dropped)
}

func TestNoScrubKeepsEverything(t *testing.T) {
	out, dropped := Build([]string{"GITHUB_TOKEN=x", "HOME=/h"}, Options{})
	assert.Equal(t, []string{"GITHUB_TOKEN=x", "HOME=/h"}, out)
	assert.Empty(t, dropped)
}

func TestHomeIsNeverLeftUnset(t *testing.T) {
	out, _ := Build([]string{"PATH=/bin"}, Options{})
	assert.Equal(t, []string{"PATH=/bin", "HOME=" + NoHome}, out)
}

func TestAgentDefaultsOverrideAndLaterEntriesWin(t *testing.T) {
	out, _ := Build([]string{"PAGER=less", "X=1", "X=2", "HOME=/h"}, Options{Agent: true})
	assert.Contains(t, out, "PAGER=cat")
	assert.NotContains(t, out, "PAGER=less")
	assert.Contains(t, out, "X=2")
	assert.NotContains(t, out, "X=1")
	assert.Contains(t, out, "NO_COLOR=1")
	assert.Contains(t, out, "TERM=dumb")
}
