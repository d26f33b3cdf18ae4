package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter of the landlock-tcp fallback (--no-network in the
// host's network namespace). Landlock's TCP rights cover connect(2) and
// bind(2) of IPPROTO_TCP sockets only, and two ways to a TCP peer pass
// beside them (review 2026-12-02, finding 1):
//
//   - Multipath TCP: socket(AF_INET or AF_INET6, SOCK_STREAM,
//     IPPROTO_MPTCP) is not an IPPROTO_TCP socket for Landlock
//     (landlock-lsm/linux#54), and it falls back to plain TCP with a plain
//     peer: any TCP listener answers it. socket() with protocol 262 is
//     refused.
//   - TCP Fast Open: sendto/sendmsg/sendmmsg with MSG_FASTOPEN connects
//     inside the send, never through the connect hook
//     (landlock-lsm/linux#41). A send whose flags carry MSG_FASTOPEN is
//     refused. (setsockopt TCP_FASTOPEN_CONNECT needs no rule: the
//     connect(2) after it is still Landlock's to deny.)
//   - io_uring: its socket, connect and send operations are not system
//     calls, so seccomp never sees their arguments. io_uring_setup,
//     io_uring_enter and io_uring_register are refused.
//
// Each is refused with EPERM. A system call of another ABI than the one
// the filter is written for (i386 through int 0x80 on x86-64, which has
// socketcall(2); x32) is refused too: a foreign architecture kills the
// process, an x32 call gets EPERM. Without a filter for this architecture
// (only x86-64 and arm64 have one) the fallback is refused at Plan.

// The fields of struct seccomp_data the filter reads; the arguments are
// 64 bits wide, and their low 32 bits (all that an int or unsigned int
// argument holds) come first on the little-endian x86-64 and arm64.
const (
	dataNr   = 0
	dataArch = 4
)

func dataArgLow(i uint32) uint32 { return 16 + 8*i }

// x32Bit marks an x32 system call on x86-64; no arm64 call is that high.
const x32Bit = 0x40000000

const (
	retAllow = unix.SECCOMP_RET_ALLOW
	retEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retKill  = unix.SECCOMP_RET_KILL_PROCESS
)

// SeccompState is whether the filter can be installed here, and why not.
func SeccompState() (bool, string) {
	if auditArch == 0 {
		return false, "shellsup has no seccomp filter for " + runtime.GOARCH
	}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		return false, "seccomp is not available: " + os.NewSyscallError("prctl(PR_GET_SECCOMP)", err).Error()
	}
	return true, ""
}

// denyTCPBypasses installs the filter on the calling thread only (no
// TSYNC): every process the thread forks inherits it, and nothing can
// lift it. no_new_privs must be set already (Restrict sets it).
func denyTCPBypasses() error {
	return install(tcpBypassFilter(), "the seccomp filter of the Landlock TCP rules")
}

// denyNamespaceHandles installs, the same way, the filter that keeps a
// root command from nsfs file handles (planHold): open_by_handle_at(2),
// and io_uring, whose operations seccomp does not see (Linux 6.19's
// IORING_OP_OPEN_BY_HANDLE_AT among them), are refused with EPERM. The
// root command it is for has CAP_SYS_ADMIN, which stands for no_new_privs.
func denyNamespaceHandles() error {
	return install(handleFilter(), "the seccomp filter against nsfs file handles")
}

// install installs prog on the calling thread; what names it in errors.
func install(prog []unix.SockFilter, what string) error {
	if ok, why := SeccompState(); !ok {
		return fmt.Errorf("installing %s: %s", what, why)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	err := error(unix.EINVAL)
	if !seamSeccompRefused() {
		err = unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0)
	}
	runtime.KeepAlive(prog)
	if err != nil {
		return fmt.Errorf("installing %s: %w", what, os.NewSyscallError("prctl(PR_SET_SECCOMP)", err))
	}
	return nil
}

// Labels of the filter's blocks.
const (
	lAllow = iota + 1
	lEPERM
	lKill
	lSocket
	lFlags2 // flags in argument 2: sendmsg
	lFlags3 // flags in argument 3: sendto, sendmmsg
)

// tcpBypassFilter is the program: check the architecture, then dispatch
// on the system call number to the block that looks at its arguments.
func tcpBypassFilter() []unix.SockFilter {
	var a bpfAsm
	a.load(dataArch)
	a.jumpIf(unix.BPF_JEQ, auditArch, 0, lKill)
	a.load(dataNr)
	a.jumpIf(unix.BPF_JGE, x32Bit, lEPERM, 0)
	a.jumpIf(unix.BPF_JEQ, unix.SYS_SOCKET, lSocket, 0)
	a.jumpIf(unix.BPF_JEQ, unix.SYS_SENDTO, lFlags3, 0)
	a.jumpIf(unix.BPF_JEQ, unix.SYS_SENDMMSG, lFlags3, 0)
	a.jumpIf(unix.BPF_JEQ, unix.SYS_SENDMSG, lFlags2, 0)
	a.jumpIf(unix.BPF_JEQ, unix.SYS_IO_URING_SETUP, lEPERM, 0)
	a.jumpIf(unix.BPF_JEQ, unix.SYS_IO_URING_ENTER, lEPERM, 0)
	a.jumpIf(unix.BPF_JEQ, unix.SYS_IO_URING_REGISTER, lEPERM, 0)
	a.ret(retAllow)

	a.label(lSocket)
	a.load(dataArgLow(2)) // protocol
	a.jumpIf(unix.BPF_JEQ, unix.IPPROTO_MPTCP, lEPERM, lAllow)
	a.label(lFlags2)
	a.load(dataArgLow(2))
	a.jumpIf(unix.BPF_JSET, unix.MSG_FASTOPEN, lEPERM, lAllow)
	a.label(lFlags3)
	a.load(dataArgLow(3))
	a.jumpIf(unix.BPF_JSET, unix.MSG_FASTOPEN, lEPERM, lAllow)

	a.label(lAllow)
	a.ret(retAllow)
	a.label(lEPERM)
	a.ret(retEPERM)
	a.label(lKill)
	a.ret(retKill)
	return a.assemble()
}

// Labels of handleFilter's blocks.
const (
	hEPERM = iota + 1
	hCompat
	hKill
)

// handleFilter refuses open_by_handle_at and io_uring_setup, _enter and
// _register, in the native ABI, in x32 (the same numbers with x32Bit) and
// in the 32-bit compat ABI (i386, arm), whose programs run on as before;
// any other architecture is killed (none runs here).
func handleFilter() []unix.SockFilter {
	uring := []uint32{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER}
	native := append([]uint32{unix.SYS_OPEN_BY_HANDLE_AT}, uring...)
	var a bpfAsm
	a.load(dataArch)
	a.jumpIf(unix.BPF_JEQ, auditArch, 0, hCompat)
	a.load(dataNr)
	for _, nr := range native {
		a.jumpIf(unix.BPF_JEQ, nr, hEPERM, 0)
		a.jumpIf(unix.BPF_JEQ, nr|x32Bit, hEPERM, 0)
	}
	a.ret(retAllow)
	a.label(hCompat) // the accumulator still holds the architecture
	a.jumpIf(unix.BPF_JEQ, compatArch, 0, hKill)
	a.load(dataNr)
	for _, nr := range append([]uint32{compatOpenByHandleAt}, uring...) { // io_uring's numbers are the same in every ABI
		a.jumpIf(unix.BPF_JEQ, nr, hEPERM, 0)
	}
	a.ret(retAllow)
	a.label(hEPERM)
	a.ret(retEPERM)
	a.label(hKill)
	a.ret(retKill)
	return a.assemble()
}

// bpfAsm writes a classic BPF program with forward jumps to labels; a
// target of 0 is the next instruction.
type bpfAsm struct {
	prog   []unix.SockFilter
	labels map[int]int    // label: index of its instruction
	jumps  map[int][2]int // index of a jump: its true and false labels
}

func (a *bpfAsm) load(off uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off})
}

func (a *bpfAsm) ret(k uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k})
}

func (a *bpfAsm) jumpIf(op uint16, k uint32, jt, jf int) {
	if a.jumps == nil {
		a.jumps = map[int][2]int{}
	}
	a.jumps[len(a.prog)] = [2]int{jt, jf}
	a.prog = append(a.prog, unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k})
}

func (a *bpfAsm) label(l int) {
	if a.labels == nil {
		a.labels = map[int]int{}
	}
	a.labels[l] = len(a.prog)
}

// assemble resolves the jumps; a backward or unknown target, or one out of
// a jump's reach, is a bug in the program above.
func (a *bpfAsm) assemble() []unix.SockFilter {
	offset := func(at, l int) uint8 {
		if l == 0 {
			return 0
		}
		to, ok := a.labels[l]
		if !ok || to <= at || to-at-1 > 255 {
			panic(fmt.Sprintf("seccomp filter: bad jump from %d to label %d", at, l))
		}
		return uint8(to - at - 1)
	}
	for at, t := range a.jumps {
		a.prog[at].Jt, a.prog[at].Jf = offset(at, t[0]), offset(at, t[1])
	}
	return a.prog
}
