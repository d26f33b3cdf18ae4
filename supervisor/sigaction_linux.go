//go:build linux && (amd64 || arm64)

package supervisor

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resetIgnoredSignals sets SIG_DFL for any signal still ignored after
// notifySignals: those the Go runtime installs no handler for unless asked
// (SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT) and the ones it never handles (32
// and 34, which glibc and musl reserve), whose inherited SIG_IGN would
// otherwise reach bash.
func resetIgnoredSignals() {
	for sig := 1; sig <= 64; sig++ {
		if sig == int(unix.SIGKILL) || sig == int(unix.SIGSTOP) {
			continue
		}
		var old sigaction
		if rtSigaction(sig, nil, &old) != nil || old.handler != sigIgn {
			continue
		}
		dfl := sigaction{handler: sigDfl}
		_ = rtSigaction(sig, &dfl, nil) // best effort: an unknown signal number just stays as it was
	}
}

const (
	sigDfl = 0
	sigIgn = 1
)

// sigaction is the kernel's struct sigaction on amd64 and arm64 (this
// file's architectures; elsewhere resetIgnoredSignals does nothing).
type sigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

func rtSigaction(sig int, act, old *sigaction) error {
	_, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(act)), uintptr(unsafe.Pointer(old)), 8, 0, 0)
	if e != 0 {
		return os.NewSyscallError("rt_sigaction", e)
	}
	return nil
}
