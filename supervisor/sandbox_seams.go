//go:build !testseams

package supervisor

import "github.com/shellsup/shellsup/sandbox"

// seamSandboxKernel is what the kernel offers, in production as probed.
func seamSandboxKernel(k sandbox.Kernel) sandbox.Kernel { return k }
