// Package linux holds thin wrappers of the Linux system calls shellsup
// makes, in the shape of runc's internal/linux: one function per system
// call, which retries EINTR where the kernel may return it for a call that
// can simply be made again, and names the call in its error with
// os.NewSyscallError, so that errors.Is(err, unix.EAGAIN) and friends keep
// working.
//
// The guarantee: no caller loops on EINTR by hand, and no error from these
// wrappers is a bare errno. close(2) is deliberately not wrapped: on Linux
// the descriptor is gone even when close returns EINTR, so retrying could
// close a descriptor another goroutine has just been given.
//
// The non-goal: no policy. Whether an error is fatal, ignored or a reason
// to fall back is the caller's decision, made where it calls.
package linux
