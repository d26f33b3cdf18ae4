// Package reapertest checks that tests leave no process behind.
//
// A test gives every process it starts an environment token (Token.Env) and
// calls Check after the run: any live process still carrying the token, or
// any process reparented to the test binary (which TestMain made a child
// subreaper with BecomeSubreaper, so orphans of a dead shellsup land on it
// even if they scrubbed their environment), fails the test with a list of
// what leaked. Leaks are then killed — only processes verified to carry the
// token or to be the test's own orphans — so one failure does not poison
// the tests after it. The guarantee is the oracle's: a leak that Check does
// not see would have to have dropped the token and escaped to a process
// outside the test's tree (a daemon).
package reapertest
