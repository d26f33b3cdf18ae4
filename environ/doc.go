// Package environ builds the environment the command gets.
//
// The guarantee: the result is the caller's environment (or the one it
// passed), with the documented changes and no other: only the allowed
// names and [Base] kept when an allow-list is given ([Options.Allow]),
// credentials dropped by name when scrubbing is asked for
// ([ScrubPatterns], matched by [Match], whose `*` crosses `/` and `:`),
// the agent-friendly settings of [AgentDefaults] (and a UTF-8 locale that
// exists on the host, [UTF8Locale]) added when asked for, and
// HOME always set, to [NoHome] when the caller's environment has none, so
// that bash never takes a home directory (and a ~/.profile) from the
// password database behind the caller's back.
//
// The non-goals: scrubbing matches variable names, not values: a secret in
// a variable with an innocent name is passed on (an allow-list is the
// answer). And nothing here hides the caller's own environment from a
// command of the same uid, which can read /proc/<pid>/environ.
package environ
