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

// quietChildExits sets SIGCHLD back to SIG_DFL, which the Go runtime
// replaced with its own handler at start. shellsup never asks for SIGCHLD
// (the Waiter blocks in waitid), so the handler only ran and returned,
// once per exit: with 2000 processes exiting at a cleanup, 2000 signal
// frames and interrupted waits. With SIG_DFL the kernel drops the signal
// when it is sent. SIG_DFL, unlike SIG_IGN (or SA_NOCLDWAIT), keeps every
// child a zombie until the Waiter reaps it, which the cleanup's pid
// pinning relies on; execve keeps SIG_DFL, which is what bash got before.
func quietChildExits() {
	dfl := sigaction{handler: sigDfl}
	_ = rtSigaction(int(unix.SIGCHLD), &dfl, nil) // best effort: the handler only costs time
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
