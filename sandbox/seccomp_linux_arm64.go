package sandbox

import "golang.org/x/sys/unix"

// auditArch is the seccomp_data.arch of this build's system calls.
const auditArch = unix.AUDIT_ARCH_AARCH64

// The 32-bit compat ABI (AArch32): its architecture, and its number of
// open_by_handle_at.
const (
	compatArch           = unix.AUDIT_ARCH_ARM
	compatOpenByHandleAt = 371
)
