// Package environ builds the environment the command gets.
//
// The guarantee: the result is the caller's environment (or the one it
// passed), with the documented changes and no other: credentials dropped by
// name when scrubbing is asked for ([Scrub]), the agent-friendly settings of
// [AgentDefaults] added when asked for, and HOME always set, to
// [NoHome] when the caller's environment has none, so that bash never takes
// a home directory (and a ~/.profile) from the password database behind the
// caller's back.
//
// The non-goal: scrubbing matches variable names, not values: a secret in a
// variable with an innocent name is passed on.
package environ
