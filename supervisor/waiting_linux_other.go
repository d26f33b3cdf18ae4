//go:build linux && !amd64

package supervisor

// archSyscallKind: other architectures have only pselect6 and ppoll.
func archSyscallKind(int64) syscallKind { return sysOther }
