package environ

import (
	"slices"
	"strings"
)

// NoHome is HOME when the environment has none: the directory Debian gives
// the user nobody, which does not exist, so no profile is read from it.
const NoHome = "/nonexistent"

// ScrubPatterns are the patterns (case-insensitive; see [Match]: `*`
// matches any run of characters, `/` and `:` included) of the variable
// names that Scrub drops: the names under which tools and CI systems
// commonly pass credentials.
var ScrubPatterns = []string{
	"*_TOKEN", "*_TOKENS", "TOKEN", "*_SECRET", "*_SECRETS", "SECRET", "*_SECRET_*",
	"*_KEY", "*_KEYS", "*_API_KEY*", "*_APIKEY", "*PASSWORD*", "*PASSWD*", "*_PASS", "*_PWD", "*_PASSPHRASE",
	"*CREDENTIAL*", "*_AUTH", "*_COOKIE", "*_SESSION", "*PRIVATE_KEY*", "*_JWT", "*_JWT_*", "*_WEBHOOK_URL",
	"SECRET_KEY_BASE", "OP_SESSION_*",
	"AWS_*", "AZURE_*", "GOOGLE_APPLICATION_CREDENTIALS", "GCLOUD_*", "CLOUDSDK_*",
	"GH_*", "GITHUB_*", "GITLAB_*", "NPM_CONFIG__AUTH*", "NPM_TOKEN", "*_AUTHTOKEN", "*:_AUTH*", "PYPI_*", "TWINE_*",
	"DOCKER_AUTH_CONFIG", "OPENAI_*", "ANTHROPIC_*", "HF_*", "HUGGING_FACE_*", "SSH_AUTH_SOCK",
	"DATABASE_URL", "*_DSN",
}

// Base are the names (or, ending in `*`, prefixes) that an allow-list
// ([Options.Allow]) always passes: what a shell and its tools need to find
// programs, a home and a locale.
var Base = []string{"PATH", "HOME", "LANG", "LC_*", "TERM", "TZ", "USER", "LOGNAME", "SHELL", "TMPDIR"}

// AgentDefaults turn off what makes a command wait for a person or print for
// a terminal: pagers, colour, editors, credential prompts, buffered output.
// With [Options.Agent], LC_ALL and LANG are set too ([Options.Locale]).
var AgentDefaults = []string{
	"PAGER=cat", "GIT_PAGER=cat", "MANPAGER=cat", "SYSTEMD_PAGER=", "LESS=-FRX", "GH_PAGER=cat",
	"NO_COLOR=1", "TERM=dumb", "CLICOLOR=0", "FORCE_COLOR=0", "COLORTERM=",
	"GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true", "EDITOR=true", "VISUAL=true",
	"GIT_ASKPASS=", "SSH_ASKPASS=", "GCM_INTERACTIVE=Never",
	"DEBIAN_FRONTEND=noninteractive", "PIP_NO_INPUT=1", "npm_config_yes=true", "CI=1",
	"PYTHONUNBUFFERED=1",
}

// Options say which changes Build makes.
type Options struct {
	Scrub bool // drop the variables whose names match ScrubPatterns
	Agent bool // add AgentDefaults, overriding what env sets
	// Locale, with Agent, is what LC_ALL and LANG are set to (UTF8Locale
	// finds one); "" means FallbackLocale.
	Locale string
	// Allow, when not empty, is an allow-list: only the variables it names
	// (exact names, or prefixes ending in `*`; case-sensitive) and those of
	// Base are kept. With Scrub as well, a name listed exactly in Allow is
	// kept even if it looks like a credential (naming it is the caller's
	// choice); a name kept through Base or a prefix is still scrubbed.
	Allow []string
}

// Build returns env with the changes opts asks for, and HOME set, plus the
// names of the variables it dropped by scrubbing (sorted). Later entries of
// env win over earlier ones with the same name, as in exec.Cmd. The order
// is: the allow-list, then scrubbing, then the agent defaults.
func Build(env []string, opts Options) (out []string, dropped []string) {
	seen := map[string]int{}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if len(opts.Allow) > 0 && !Allowed(name, opts.Allow) {
			continue
		}
		if opts.Scrub && Secret(name) && !slices.Contains(opts.Allow, name) {
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
		for _, kv := range agentSettings(opts.Locale) {
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

// agentSettings are AgentDefaults with LC_ALL and LANG set to locale.
func agentSettings(locale string) []string {
	if locale == "" {
		locale = FallbackLocale
	}
	return append(slices.Clone(AgentDefaults), "LC_ALL="+locale, "LANG="+locale)
}

// Allowed reports whether the allow-list allow (with Base) passes a
// variable named name: an entry equal to it, or ending in `*` and a prefix
// of it. Names are compared case-sensitively, as the kernel and the shell
// do.
func Allowed(name string, allow []string) bool {
	return allowedBy(name, Base) || allowedBy(name, allow)
}

func allowedBy(name string, list []string) bool {
	for _, a := range list {
		if prefix, ok := strings.CutSuffix(a, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if a == name {
			return true
		}
	}
	return false
}

// Secret reports whether a variable named name is dropped by Scrub.
func Secret(name string) bool {
	upper := strings.ToUpper(name)
	for _, p := range ScrubPatterns {
		if Match(p, upper) {
			return true
		}
	}
	return false
}

// Match reports whether name matches pattern, in which `*` matches any run
// of characters (none, or any number, `/` and `:` included) and every other
// character only itself. Unlike path.Match there are no classes, escapes or
// `?`, and no character is special in name. Cost: O(len(pattern) ×
// len(name)) at worst.
func Match(pattern, name string) bool {
	px, nx := 0, 0
	starP, starN := -1, 0 // the last `*` seen, and where in name it took over
	for nx < len(name) {
		switch {
		case px < len(pattern) && pattern[px] == '*':
			starP, starN = px, nx
			px++
		case px < len(pattern) && pattern[px] == name[nx]:
			px++
			nx++
		case starP >= 0:
			starN++
			px, nx = starP+1, starN
		default:
			return false
		}
	}
	for px < len(pattern) && pattern[px] == '*' {
		px++
	}
	return px == len(pattern)
}
