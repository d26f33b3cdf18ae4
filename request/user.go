package request

import (
	"strings"
	"unicode/utf8"
)

// UserForm says what --user accepts, in the words of every message that
// refuses one.
const UserForm = "USER or USER:GROUP, each a name or a numeric id (e.g. nobody, 65534, nobody:nogroup)"

// ValidateUser checks the form of a --user value: a user and an optional
// group after one colon, each a non-empty name or number without
// whitespace, colons or NUL bytes, in UTF-8. Whether the user and the group
// exist is shellsup's to check (in its own /etc/passwd and /etc/group).
func ValidateUser(spec string) error {
	name, group, hasGroup := strings.Cut(spec, ":")
	switch {
	case spec == "":
		return Invalidf("user must be %s (got \"\")", UserForm)
	case !utf8.ValidString(spec) || strings.ContainsFunc(spec, badUserRune):
		return Invalidf("user must be %s, without whitespace, control characters or NUL bytes (got %q)", UserForm, clip(spec))
	case name == "" || (hasGroup && (group == "" || strings.Contains(group, ":"))):
		return Invalidf("user must be %s (got %q)", UserForm, clip(spec))
	}
	return nil
}

func badUserRune(r rune) bool {
	return r <= ' ' || r == 0x7f || r == utf8.RuneError
}
