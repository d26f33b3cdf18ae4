package environ

import (
	"path"
	"slices"
	"strings"
)

// NoHome is HOME when the environment has none: the directory Debian gives
// the user nobody, which does not exist, so no profile is read from it.
const NoHome = "/nonexistent"

// ScrubPatterns are the shell-style patterns (path.Match, case-insensitive)
// of the variable names that Scrub drops: the names under which tools and
// CI systems commonly pass credentials.
var ScrubPatterns = []string{
	"*_TOKEN", "*_TOKENS", "TOKEN", "*_SECRET", "*_SECRETS", "SECRET", "*_SECRET_*",
	"*_KEY", "*_KEYS", "*_API_KEY*", "*PASSWORD*", "*PASSWD*", "*_PASS", "*CREDENTIAL*",
	"*_AUTH", "*_COOKIE", "*_SESSION", "*PRIVATE_KEY*",
	"AWS_*", "AZURE_*", "GOOGLE_APPLICATION_CREDENTIALS", "GCLOUD_*", "CLOUDSDK_*",
	"GH_*", "GITHUB_*", "GITLAB_*", "NPM_CONFIG__AUTH*", "NPM_TOKEN", "PYPI_*", "TWINE_*",
	"DOCKER_AUTH_CONFIG", "OPENAI_*", "ANTHROPIC_*", "HF_*", "HUGGING_FACE_*", "SSH_AUTH_SOCK",
	"DATABASE_URL", "*_DSN",
}

// AgentDefaults turn off what makes a command wait for a person or print for
// a terminal: pagers, colour, editors, credential prompts.
var AgentDefaults = []string{
	"PAGER=cat", "GIT_PAGER=cat", "MANPAGER=cat", "SYSTEMD_PAGER=", "LESS=-FRX",
	"NO_COLOR=1", "TERM=dumb", "CLICOLOR=0", "FORCE_COLOR=0",
	"GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true", "EDITOR=true", "VISUAL=true",
	"DEBIAN_FRONTEND=noninteractive", "PIP_NO_INPUT=1", "npm_config_yes=true", "CI=1",
}

// Options say which changes Build makes.
type Options struct {
	Scrub bool // drop the variables whose names match ScrubPatterns
	Agent bool // add AgentDefaults, overriding what env sets
}

// Build returns env with the changes opts asks for, and HOME set, plus the
// names of the variables it dropped (sorted). Later entries of env win over
// earlier ones with the same name, as in exec.Cmd.
func Build(env []string, opts Options) (out []string, dropped []string) {
	seen := map[string]int{}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if opts.Scrub && Secret(name) {
			if !slices.Contains(dropped, name) {
				dropped = append(dropped, name)
			}
			continue
		}
		if i, ok := seen[name]; ok {
			out[i] = kv
			continue
		}
		seen[name] = len(out)
		out = append(out, kv)
	}
	if opts.Agent {
		for _, kv := range AgentDefaults {
			name, _, _ := strings.Cut(kv, "=")
			if i, ok := seen[name]; ok {
				out[i] = kv
			} else {
				seen[name] = len(out)
				out = append(out, kv)
			}
		}
	}
	if _, ok := seen["HOME"]; !ok {
		out = append(out, "HOME="+NoHome)
	}
	slices.Sort(dropped)
	return out, dropped
}

// Secret reports whether a variable named name is dropped by Scrub.
func Secret(name string) bool {
	upper := strings.ToUpper(name)
	for _, p := range ScrubPatterns {
		if ok, _ := path.Match(p, upper); ok {
			return true
		}
	}
	return false
}
