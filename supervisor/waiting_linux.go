package supervisor

import (
	"encoding/binary"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/procstat"
)

// A program waits for input when a process of the terminal's foreground
// process group is blocked in a read of the terminal, or in a select or
// poll that asks whether the terminal is readable, and none of the group
// is running. /proc/PID/syscall names the blocking syscall and its
// arguments; the fd sets and poll arrays are read from /proc/PID/mem
// (both need the ptrace access shellsup has to its own tree; a process it
// cannot inspect, such as a set-uid sudo run by another user, counts as
// not waiting). Each fd is matched by the terminal's device number.

// maxPollFds bounds the poll array read from a process.
const maxPollFds = 256

// waitingForTerminal reports whether the terminal's foreground process
// group (read from master) waits for input on the terminal ttyDev.
func waitingForTerminal(master *os.File, ttyDev uint64, procRoot string, shellsup int) bool {
	fg, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPGRP)
	if err != nil || fg <= 1 {
		return false
	}
	members := []int{fg} // the group's leader, usually the reader
	if st, ok := readPgrp(procRoot, fg); !ok || st != fg {
		members = members[:0]
	}
	if len(members) == 0 || !blockedOnTerminal(procRoot, members[0], ttyDev) {
		members = members[:0]
		for _, p := range treeProcs(procRoot, shellsup) {
			if g, ok := readPgrp(procRoot, p.Pid); ok && g == fg {
				members = append(members, p.Pid)
			}
		}
	}
	reading := false
	for _, pid := range members {
		if state, ok := readState(procRoot, pid); ok && state == 'R' {
			return false // busy: output may still come
		}
		if !reading && blockedOnTerminal(procRoot, pid, ttyDev) {
			reading = true
		}
	}
	return reading
}

func readPgrp(procRoot string, pid int) (int, bool) {
	st, err := procstat.Read(procRoot, pid)
	return st.Pgrp, err == nil
}

func readState(procRoot string, pid int) (byte, bool) {
	st, err := procstat.Read(procRoot, pid)
	return st.State, err == nil
}

// blockedOnTerminal reports whether pid is blocked in a read of the
// terminal, or in a select or poll for its input.
func blockedOnTerminal(procRoot string, pid int, ttyDev uint64) bool {
	dir := procRoot + "/" + strconv.Itoa(pid)
	data, err := os.ReadFile(dir + "/syscall")
	if err != nil {
		return false
	}
	f := strings.Fields(string(data))
	if len(f) < 4 {
		return false // "running", or blocked outside a syscall
	}
	nr, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return false
	}
	var args [3]uint64
	for i := range args {
		if args[i], err = strconv.ParseUint(strings.TrimPrefix(f[i+1], "0x"), 16, 64); err != nil {
			return false
		}
	}
	switch kindOfSyscall(nr) {
	case sysRead:
		return isTerminalFd(dir, int(args[0]), ttyDev)
	case sysSelect:
		return selectsTerminal(dir, int(args[0]), args[1], ttyDev)
	case sysPoll:
		return pollsTerminal(dir, args[0], int(args[1]), ttyDev)
	}
	return false
}

type syscallKind int

const (
	sysOther syscallKind = iota
	sysRead
	sysSelect // (nfds, readfds, ...)
	sysPoll   // (fds, nfds, ...)
)

func kindOfSyscall(nr int64) syscallKind {
	switch nr {
	case unix.SYS_READ, unix.SYS_READV:
		return sysRead
	case unix.SYS_PSELECT6:
		return sysSelect
	case unix.SYS_PPOLL:
		return sysPoll
	}
	return archSyscallKind(nr)
}

// devTTY is /dev/tty's device number (5, 0): the opener's controlling
// terminal, which for a process of the terminal's foreground process
// group is the terminal (getpass and sudo read it).
var devTTY = unix.Mkdev(5, 0)

// isTerminalFd reports whether the process's fd is the terminal, or
// /dev/tty.
func isTerminalFd(dir string, fd int, ttyDev uint64) bool {
	var st unix.Stat_t
	if fd < 0 || unix.Stat(dir+"/fd/"+strconv.Itoa(fd), &st) != nil {
		return false
	}
	return st.Mode&unix.S_IFMT == unix.S_IFCHR && (st.Rdev == ttyDev || st.Rdev == devTTY)
}

// selectsTerminal reads the select's read set and looks for the terminal.
func selectsTerminal(dir string, nfds int, readfds uint64, ttyDev uint64) bool {
	if readfds == 0 || nfds <= 0 || nfds > 1024 {
		return false
	}
	set, ok := readMem(dir, readfds, (nfds+7)/8)
	if !ok {
		return false
	}
	for fd := 0; fd < nfds; fd++ {
		if set[fd/8]&(1<<(fd%8)) != 0 && isTerminalFd(dir, fd, ttyDev) {
			return true
		}
	}
	return false
}

// pollsTerminal reads the poll array and looks for the terminal polled
// for input.
func pollsTerminal(dir string, fds uint64, nfds int, ttyDev uint64) bool {
	if fds == 0 || nfds <= 0 {
		return false
	}
	nfds = min(nfds, maxPollFds)
	arr, ok := readMem(dir, fds, nfds*8)
	if !ok {
		return false
	}
	for i := 0; i < nfds; i++ {
		fd := int32(binary.NativeEndian.Uint32(arr[i*8:]))
		events := binary.NativeEndian.Uint16(arr[i*8+4:])
		if events&unix.POLLIN != 0 && isTerminalFd(dir, int(fd), ttyDev) {
			return true
		}
	}
	return false
}

// readMem reads n bytes at addr of the process's memory.
func readMem(dir string, addr uint64, n int) ([]byte, bool) {
	f, err := os.Open(dir + "/mem")
	if err != nil {
		return nil, false
	}
	defer f.Close() // read-only
	b := make([]byte, n)
	k, err := f.ReadAt(b, int64(addr))
	return b, err == nil && k == n
}
