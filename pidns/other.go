//go:build !linux

package pidns

import "errors"

// ErrUnsupported: PID namespaces exist only on Linux.
var ErrUnsupported = errors.New("PID namespaces need Linux")

// MaybeInit does nothing outside Linux.
func MaybeInit() {}
