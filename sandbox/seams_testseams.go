//go:build testseams

package sandbox

import (
	"os"
	"slices"
	"strings"
)

// seamSeccompRefused: seccomp=refuse in SHELLSUP_TEST_SANDBOX_KERNEL (the
// supervisor's seam, which takes it for a kernel with seccomp) makes
// installing the seccomp filter fail (EINVAL), as a kernel refusing it
// would, so tests can see the run refused. Read where the filter is
// installed, in the PID-namespace init too.
func seamSeccompRefused() bool {
	return slices.Contains(strings.Split(os.Getenv("SHELLSUP_TEST_SANDBOX_KERNEL"), ","), "seccomp=refuse")
}
