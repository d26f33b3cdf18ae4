//go:build testseams

package supervisor

import (
	"os"
	"time"
)

// Test builds (go build -tags testseams) read these environment variables,
// for the tests that must see containment fail or shellsup die early:
//
//	SHELLSUP_TEST_PROC_ROOT=DIR   check DIR instead of /proc at setup
//	SHELLSUP_TEST_NO_CONTAINMENT=1  no subreaper, no cleanup (the leak
//	                               checker's negative control)
//	SHELLSUP_TEST_START_DELAY=DUR  wait DUR between the spawn and the
//	                               start frame (a command that kills
//	                               shellsup at once then always wins)

func seamNoContainment() bool { return os.Getenv("SHELLSUP_TEST_NO_CONTAINMENT") == "1" }

func seamProc() string {
	if v := os.Getenv("SHELLSUP_TEST_PROC_ROOT"); v != "" {
		return v
	}
	return "/proc"
}

func seamStartDelay() time.Duration {
	d, _ := time.ParseDuration(os.Getenv("SHELLSUP_TEST_START_DELAY")) // unset or bad: no delay
	return d
}
