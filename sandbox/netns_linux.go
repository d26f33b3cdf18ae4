package sandbox

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// EnterNetwork moves the calling thread into a new network namespace and
// brings its loopback up; the processes it forks are born there. It needs
// CAP_SYS_ADMIN (root). The caller keeps the thread locked and lets the Go
// runtime retire it.
func EnterNetwork() error {
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("making a network namespace for --no-network: %w", os.NewSyscallError("unshare(CLONE_NEWNET)", err))
	}
	return LoopbackUp()
}

// LoopbackUp brings up lo in the calling thread's network namespace, so
// the command's own servers on 127.0.0.1 and ::1 answer it.
func LoopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bringing lo up: %w", os.NewSyscallError("socket", err))
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("bringing lo up: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing lo up: %w", os.NewSyscallError("ioctl(SIOCGIFFLAGS)", err))
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing lo up: %w", os.NewSyscallError("ioctl(SIOCSIFFLAGS)", err))
	}
	return nil
}
