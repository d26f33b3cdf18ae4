package cli

import (
	"flag"
	"fmt"
	"strings"

	"github.com/shellsup/shellsup/sandbox"
	"github.com/shellsup/shellsup/supervisor"
)

// sandboxFlags are --sandbox, --protect (repeatable) and --no-network.
// --sandbox "" is refused: it must not mean "no sandbox".
func sandboxFlags(fs *flag.FlagSet, a *supervisor.Args) {
	fs.Func("sandbox", "", func(s string) error {
		if s == "" {
			return fmt.Errorf("sandbox must be one of %s", strings.Join(sandbox.Modes, ", "))
		}
		a.Sandbox = s
		return nil
	})
	fs.Func("protect", "", func(s string) error {
		a.Protect = append(a.Protect, s)
		return nil
	})
	fs.BoolVar(&a.NoNetwork, "no-network", false, "")
}
