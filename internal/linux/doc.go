// Package linux holds thin wrappers of the Linux system calls shellsup
// makes, in the shape of runc's internal/linux: one function per system
// call, which retries EINTR where the kernel may return it for a call that
// can simply be made again, and names the call in its error with
// os.NewSyscallError, so that errors.Is(err, unix.EAGAIN) and friends keep
// working.
//
// The guarantee: no caller loops on EINTR by hand (noeintr_test.go parses
// every shipped file of the module and fails on a loop that names EINTR
// outside this package), and no error from these wrappers is a bare errno,
// but for Waitid, Wait4 and Openat, whose callers want the errno. Poll
// retries with what is left of its timeout, so an interrupted wait never
// grows. retry.go (with Openat) builds on every system: the Go binding
// opens its spill files on macOS too. close(2) is deliberately not
// wrapped: on Linux the descriptor is gone even when close returns EINTR,
// so retrying could close a descriptor another goroutine has just been
// given.
//
// The non-goal: no policy. Whether an error is fatal, ignored or a reason
// to fall back is the caller's decision, made where it calls.
package linux
