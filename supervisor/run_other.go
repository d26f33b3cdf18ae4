//go:build !linux

package supervisor

import (
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper"
)

// run refuses: containment needs Linux.
func run(cfg Config, stdio Stdio, out *output) int {
	return fail(out, protocol.CategoryContainmentUnavailable, reaper.ErrUnsupported, ExitFailed)
}
