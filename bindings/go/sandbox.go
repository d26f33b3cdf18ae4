package shellsup

import (
	"slices"

	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/request"
)

// Sandbox modes, the values of Request.Sandbox.
const (
	SandboxReadOnly       = "read-only"
	SandboxWorkspaceWrite = "workspace-write"
	SandboxNone           = "none" // as "": no filesystem rules
)

// SandboxReport is what the sandbox enforced for a run.
type SandboxReport struct {
	Mode     string   // "read-only", "workspace-write" or "none"
	Writable []string // where the command could write; empty without filesystem rules
	// Network is "host", "loopback" (a network namespace of its own) or
	// "none" (Landlock denied every TCP connect and bind).
	Network string
	Via     string // the mechanisms, "+"-joined: "landlock", "netns", "landlock-tcp"
	TmpDir  string // the private TMPDIR, removed at cleanup
}

// sandboxOptions are Sandbox, Protect and Network as shellsup's flags.
type sandboxOptions struct {
	mode      string
	protect   []string
	noNetwork bool
}

func (o sandboxOptions) args() []string {
	var args []string
	if o.mode != "" {
		args = append(args, "--sandbox="+o.mode)
	}
	for _, p := range o.protect {
		args = append(args, "--protect="+p)
	}
	if o.noNetwork {
		args = append(args, "--no-network")
	}
	return args
}

// validateSandbox checks what shellsup checks before it resolves the
// directories.
func validateSandbox(mode, workspace string, protect []string) error {
	if err := request.ValidateSandbox(mode, workspace != "", len(protect)); err != nil {
		return err
	}
	for _, p := range protect {
		if err := request.ValidateProtect(p); err != nil {
			return err
		}
		if err := validatePath("protect", p); err != nil {
			return err
		}
	}
	return nil
}

// sandboxOf converts the frame's report.
func sandboxOf(s *protocol.Sandbox) *SandboxReport {
	if s == nil {
		return nil
	}
	return &SandboxReport{Mode: s.Mode, Writable: slices.Clone(s.Writable), Network: s.Network, Via: s.Via, TmpDir: s.TmpDir}
}
