package supervisor

import "github.com/shellsup/shellsup/reaper"

// setupContainment makes shellsup a subreaper and checks /proc; a test
// build can turn it off for the negative control.
func setupContainment() (*reaper.Containment, error) {
	if seamNoContainment() {
		return reaper.Disabled(), nil
	}
	return reaper.Setup(seamProc())
}
