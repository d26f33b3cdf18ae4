package shellsup

import "syscall"

// platformCheck: shellsup runs on Linux.
func platformCheck() error { return nil }

// sysProcAttr asks the kernel to send shellsup SIGTERM when the thread that
// spawned it exits — which, as that thread is locked until shellsup exits
// (see process.own), happens only when the calling process dies. shellsup
// takes a SIGTERM that arrives after its parent changed as reason
// "parent-gone". This backs up the control channel, whose EOF tells
// shellsup the same thing.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
