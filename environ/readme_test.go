package environ

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tableEntries returns the code spans in the table rows of docs/environment.md
// between the bullets that start with from and to.
func tableEntries(t *testing.T, readme, from, to string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, from)
	require.True(t, ok, "README has no %q", from)
	part, _, ok := strings.Cut(rest, to)
	require.True(t, ok, "README has no %q after %q", to, from)
	span := regexp.MustCompile("`([^`]*)`")
	var out []string
	for _, line := range strings.Split(part, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "|") {
			continue
		}
		for _, m := range span.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// docs/environment.md's tables list exactly what --scrub-env drops, what
// --agent-env sets and what --env-allow always passes.
func TestReadmeListsMatch(t *testing.T) {
	raw, err := os.ReadFile("../docs/environment.md")
	require.NoError(t, err)
	readme := string(raw)
	assert.ElementsMatch(t, ScrubPatterns, tableEntries(t, readme, "**`--scrub-env`**", "**`--agent-env`**"))
	assert.ElementsMatch(t, AgentDefaults, tableEntries(t, readme, "**`--agent-env`**", "**`--env-allow NAME,…`**"))
	assert.ElementsMatch(t, Base, tableEntries(t, readme, "**`--env-allow NAME,…`**", "**The harness's own environment"))
}
