package supervisor

import "golang.org/x/sys/unix"

// archSyscallKind knows amd64's older select and poll.
func archSyscallKind(nr int64) syscallKind {
	switch nr {
	case unix.SYS_SELECT:
		return sysSelect
	case unix.SYS_POLL:
		return sysPoll
	}
	return sysOther
}
