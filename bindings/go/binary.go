package shellsup

import (
	"fmt"
	"os"
	"os/exec"
)

// BinaryEnv names the environment variable that points Run at the shellsup
// executable when Request.Binary is empty.
const BinaryEnv = "SHELLSUP_BIN"

// findBinary returns the shellsup executable to run, from the first of
// these places that is set:
//
//  1. Request.Binary, as given;
//  2. $SHELLSUP_BIN, in the calling process's environment;
//  3. "shellsup" in $PATH.
//
// A place that is set but does not hold an executable is an error: Run
// never falls back to a binary the caller did not name. The not_found error
// lists every place looked at.
func findBinary(explicit string) (string, error) {
	if explicit != "" {
		return lookPath(explicit, fmt.Sprintf("Request.Binary %q", explicit))
	}
	if env := os.Getenv(BinaryEnv); env != "" {
		return lookPath(env, fmt.Sprintf("Request.Binary unset; $%s %q", BinaryEnv, env))
	}
	return lookPath("shellsup", fmt.Sprintf("Request.Binary unset; $%s unset; \"shellsup\" in $PATH (%s)", BinaryEnv, os.Getenv("PATH")))
}

// lookPath checks that path is an executable file (or finds a bare name in
// $PATH), as exec.Command would.
func lookPath(path, looked string) (string, error) {
	bin, err := exec.LookPath(path)
	if err != nil {
		return "", newError(CategoryNotFound, fmt.Sprintf("no shellsup binary: looked at %s: %v", looked, err), err)
	}
	return bin, nil
}
