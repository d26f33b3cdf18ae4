package sandbox

import (
	"errors"
	"os"
	"strings"
	"sync"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Minimum kernels: Landlock ABI 5 Linux 6.10 (ABI 4, TCP, 6.7); network
// namespaces 2.6.29; unprivileged user namespaces 3.8.

// Probe is what this kernel offers, asked once.
var Probe = sync.OnceValue(probe)

func probe() Kernel {
	var k Kernel
	abi, err := ll.LandlockGetABIVersion()
	switch {
	case errors.Is(err, unix.ENOSYS):
		k.LandlockWhy = "not built into this kernel (ENOSYS)"
	case errors.Is(err, unix.EOPNOTSUPP):
		k.LandlockWhy = "disabled at boot (EOPNOTSUPP: not in the lsm= list)"
	case err != nil:
		k.LandlockWhy = "unavailable: " + err.Error()
	default:
		k.LandlockABI = abi
	}
	_, err = os.Stat("/proc/self/ns/net")
	k.NetNS = err == nil
	k.UserNS, k.UserNSWhy = userNS()
	k.Seccomp, k.SeccompWhy = SeccompState()
	k.NSHandles = nsHandles()
	return k
}

// nsHandles: nsfs has file handles (Linux 6.18), as name_to_handle_at of
// a namespace file says. Only EOPNOTSUPP (a kernel without them) says no:
// any other failure counts as yes, and a root command's --no-network then
// needs the filter against them.
func nsHandles() bool {
	fd, err := unix.Open("/proc/self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true
	}
	defer unix.Close(fd)
	_, _, err = unix.NameToHandleAt(fd, "", unix.AT_EMPTY_PATH)
	return !errors.Is(err, unix.EOPNOTSUPP)
}

// userNS reads the settings that stop unprivileged user namespaces; the
// --pidns tier itself refuses if clone fails for another reason.
func userNS() (bool, string) {
	if v := readSetting("/proc/sys/user/max_user_namespaces"); v == "0" {
		return false, "/proc/sys/user/max_user_namespaces is 0"
	}
	if v := readSetting("/proc/sys/kernel/unprivileged_userns_clone"); v == "0" {
		return false, "kernel.unprivileged_userns_clone is 0"
	}
	if v := readSetting("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); v == "1" {
		return false, "kernel.apparmor_restrict_unprivileged_userns is 1"
	}
	return true, ""
}

// readSetting is a /proc/sys value, or "" when it does not exist.
func readSetting(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
