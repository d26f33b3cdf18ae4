//go:build linux && !amd64 && !arm64

package sandbox

// auditArch 0: no seccomp filter is written for this architecture, so the
// Landlock TCP fallback, which needs one, is refused.
const auditArch = 0

// No compat ABI either.
const (
	compatArch           = 0
	compatOpenByHandleAt = 0
)
