package proctest

import (
	"testing"
	"time"
)

// pollEvery is how often a condition is tried again.
const pollEvery = 5 * time.Millisecond

// Await tries cond until it holds or within has passed, and reports
// whether it held. It never fails a test: helper programs use it too.
func Await(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
}

// Poll is Await that fails t, saying what it waited for, if cond does not
// hold within the deadline.
func Poll(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Await(within, cond) {
		t.Fatalf("timed out after %v waiting for %s", within, what)
	}
}
