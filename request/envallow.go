package request

import (
	"strings"
	"unicode/utf8"
)

// EnvAllowForm says what --env-allow accepts, in the words of every
// message that refuses a name.
const EnvAllowForm = "a variable name, or a prefix ending in * (e.g. MY_VAR, LC_*), without =, commas, whitespace, control characters or NUL bytes"

// SplitEnvAllow splits one --env-allow value at its commas and checks
// every name (ValidateEnvAllowName): "A,,B" and a trailing comma are an
// empty name, refused.
func SplitEnvAllow(value string) ([]string, error) {
	names := strings.Split(value, ",")
	for _, n := range names {
		if err := ValidateEnvAllowName(n); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// ValidateEnvAllowName checks one allow-list name: not empty, UTF-8,
// without `=`, `,`, whitespace, control characters or NUL, and with `*`
// only as its last character and not alone (a bare `*` would pass
// everything: leave --env-allow out for that).
func ValidateEnvAllowName(name string) error {
	stem, _ := strings.CutSuffix(name, "*")
	switch {
	case name == "":
		return Invalidf("env-allow names must be %s (got \"\")", EnvAllowForm)
	case !utf8.ValidString(name) || strings.ContainsFunc(name, badEnvRune):
		return Invalidf("env-allow names must be %s (got %q)", EnvAllowForm, clip(name))
	case stem == "" || strings.Contains(stem, "*"):
		return Invalidf("env-allow names must be %s; * only at the end of a prefix (got %q)", EnvAllowForm, clip(name))
	}
	return nil
}

func badEnvRune(r rune) bool {
	return r <= ' ' || r == 0x7f || r == utf8.RuneError || r == '=' || r == ',' ||
		(r >= 0x80 && r <= 0x9f) || r == 0x85 || r == 0xa0 || r == 0x2028 || r == 0x2029
}
