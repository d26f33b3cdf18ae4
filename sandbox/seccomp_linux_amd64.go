package sandbox

import "golang.org/x/sys/unix"

// auditArch is the seccomp_data.arch of this build's system calls.
const auditArch = unix.AUDIT_ARCH_X86_64
