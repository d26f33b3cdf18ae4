//go:build !linux

package shellsup

import (
	"os"
	"syscall"
)

// platformCheck: shellsup, its child subreaper and the parent-death signal
// exist only on Linux. Run returns this error, which wraps ErrUnsupported,
// after validating the request and before looking for the binary.
func platformCheck() error {
	return newError(CategoryContainmentUnavailable, "runs only on Linux: it needs a child subreaper and a parent-death signal", ErrUnsupported)
}

// sysProcAttr is never used: platformCheck fails first.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// socketPair is never used: platformCheck fails first.
func socketPair(string) (*os.File, *os.File, error) { return nil, nil, ErrUnsupported }
