//go:build testseams

package supervisor

import "os"

// Test builds (go build -tags testseams) read two environment variables,
// for the tests that must see containment fail:
//
//	SHELLSUP_TEST_PROC_ROOT=DIR   check DIR instead of /proc at setup
//	SHELLSUP_TEST_NO_CONTAINMENT=1  no subreaper, no cleanup (the leak
//	                               checker's negative control)

func seamNoContainment() bool { return os.Getenv("SHELLSUP_TEST_NO_CONTAINMENT") == "1" }

func seamProc() string {
	if v := os.Getenv("SHELLSUP_TEST_PROC_ROOT"); v != "" {
		return v
	}
	return "/proc"
}
