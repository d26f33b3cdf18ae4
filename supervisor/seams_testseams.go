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
//	SHELLSUP_TEST_TTY_STALL=DUR    give up on a terminal that took nothing
//	                               for DUR instead of 15 s (stallWait)
//	SHELLSUP_TEST_TIDY_HOLD=DUR    --tidy holds a partial line for DUR
//	                               instead of 50 ms (a test comparing whole
//	                               texts is then not at the mercy of a
//	                               scheduler's pause)
//	SHELLSUP_TEST_SUMMARY_WAIT=DUR try the summary on a stuck terminal for
//	                               DUR instead of 2 s (a test can then
//	                               resume the terminal and read it)

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

func seamStallWait(d time.Duration) time.Duration { return envDuration("SHELLSUP_TEST_TTY_STALL", d) }

func seamSummaryWait(d time.Duration) time.Duration {
	return envDuration("SHELLSUP_TEST_SUMMARY_WAIT", d)
}

func seamTidyHold(d time.Duration) time.Duration { return envDuration("SHELLSUP_TEST_TIDY_HOLD", d) }

// envDuration is the duration the variable name holds, or d when it is
// unset or bad.
func envDuration(name string, d time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return v
	}
	return d
}
