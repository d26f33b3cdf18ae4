package sandbox

import "golang.org/x/sys/unix"

// auditArch is the seccomp_data.arch of this build's system calls.
const auditArch = unix.AUDIT_ARCH_X86_64

// The 32-bit compat ABI (int 0x80): its architecture, and its number of
// open_by_handle_at.
const (
	compatArch           = unix.AUDIT_ARCH_I386
	compatOpenByHandleAt = 342
)
