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

// ignoreReservedSignals sets SIG_IGN for the real-time signals the Go
// runtime reserves (32 to 34) if they are still at SIG_DFL, whose action is
// to terminate: the runtime installs no handler for them and cannot be
// asked to, so a command's kill -34 $PPID would otherwise end shellsup
// with no cleanup. It runs right after bash is exec'd (a command cannot signal
// shellsup any sooner), because an ignored
// signal stays ignored across execve; shellsup forks nothing later. A
// signal that has a handler (the runtime's, for 33) is left as it is.
func ignoreReservedSignals() {
	for sig := firstReservedRT; sig < firstCatchableRT; sig++ {
		var old sigaction
		if rtSigaction(sig, nil, &old) != nil || old.handler != sigDfl {
			continue
		}
		ign := sigaction{handler: sigIgn}
		_ = rtSigaction(sig, &ign, nil) // best effort: the signal then keeps its default
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
