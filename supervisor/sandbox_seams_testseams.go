//go:build testseams

package supervisor

import (
	"os"
	"strconv"
	"strings"

	"github.com/shellsup/shellsup/sandbox"
)

// seamSandboxKernel takes away what SHELLSUP_TEST_SANDBOX_KERNEL says, a
// comma-separated list, so tests can see the sandbox refuse on a kernel
// without it:
//
//	landlock=N  Landlock ABI N (0: no Landlock)
//	netns=0     no network namespaces
//	userns=0    no unprivileged user namespaces
//	seccomp=0   no seccomp filter (for the Landlock TCP rules)
//	seccomp=refuse  seccomp, but installing the filter fails (the sandbox package's seam)
//	nshandles=0|1   nsfs without (with) file handles
func seamSandboxKernel(k sandbox.Kernel) sandbox.Kernel {
	for _, kv := range strings.Split(os.Getenv("SHELLSUP_TEST_SANDBOX_KERNEL"), ",") {
		name, value, _ := strings.Cut(kv, "=")
		switch name {
		case "landlock":
			k.LandlockABI, _ = strconv.Atoi(value)
			if k.LandlockABI == 0 {
				k.LandlockWhy = "disabled (simulated by SHELLSUP_TEST_SANDBOX_KERNEL)"
			}
		case "netns":
			k.NetNS = value != "0"
		case "userns":
			k.UserNS = value != "0"
			if !k.UserNS {
				k.UserNSWhy = "disabled (simulated by SHELLSUP_TEST_SANDBOX_KERNEL)"
			}
		case "nshandles":
			k.NSHandles = value != "0"
		case "seccomp":
			k.Seccomp = value != "0"
			if !k.Seccomp {
				k.SeccompWhy = "disabled (simulated by SHELLSUP_TEST_SANDBOX_KERNEL)"
			}
		}
	}
	return k
}
