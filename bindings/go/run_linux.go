package shellsup

import (
	"os"
	"syscall"
)

// platformCheck: shellsup runs on Linux.
func platformCheck() error { return nil }

// sysProcAttr asks the kernel for two things.
//
// A parent-death signal: shellsup gets SIGTERM when the thread that spawned
// it exits — which, as that thread is locked until shellsup exits (see
// process.own), happens only when the calling process dies. shellsup takes
// a SIGTERM that arrives after its parent changed as reason "parent-gone".
// This backs up the control channel, whose EOF tells shellsup the same
// thing.
//
// A process group of its own (Setpgid), in the caller's session. The
// command runs as the caller's user, so it can stop shellsup (kill -STOP
// $PPID). Were shellsup in the caller's group, that group would then hold
// a stopped member, and the moment it became orphaned (its last member
// with a parent outside it, in the same session, exiting: a harness started
// in the background by a shell that has since exited) the kernel would
// send the whole group SIGHUP and SIGCONT — killing the caller. In a group
// of its own only shellsup gets them. A terminal's Ctrl-C then reaches the
// caller alone (README, "Process group and Ctrl-C").
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
}

// socketPair returns the two ends of a socketpair(AF_UNIX, SOCK_STREAM),
// both close-on-exec: Run's, non-blocking so that reads can have deadlines,
// and shellsup's, blocking as a pipe would be.
func socketPair(name string) (ours, theirs *os.File, err error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(fds[0]), name), os.NewFile(uintptr(fds[1]), name+" (shellsup's end)"), nil
}
