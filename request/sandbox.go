package request

import (
	"fmt"
	"slices"
	"strings"
)

// SandboxModes are the values --sandbox accepts (docs/sandbox.md).
var SandboxModes = []string{"read-only", "workspace-write", "none"}

// ValidateSandbox checks a --sandbox mode ("" means none) against whether
// a workspace is given and how many --protect directories are.
func ValidateSandbox(mode string, workspace bool, protect int) error {
	if mode == "" {
		mode = "none"
	}
	if !slices.Contains(SandboxModes, mode) {
		return Invalidf("sandbox must be one of %s (got %q)", strings.Join(SandboxModes, ", "), mode)
	}
	if mode == "workspace-write" && !workspace {
		return Invalidf("sandbox workspace-write needs --workspace DIR, the directory the command may write (got no --workspace)")
	}
	if protect > 0 && mode != "workspace-write" {
		return Invalidf("protect keeps directories of the workspace read-only and needs --sandbox workspace-write (got --sandbox %s)", mode)
	}
	return nil
}

// ValidateProtect checks the form of one --protect directory.
func ValidateProtect(dir string) error {
	if dir == "" || strings.IndexByte(dir, 0) >= 0 {
		return Invalidf("protect must be a directory in the workspace, without NUL bytes (got %s)", fmt.Sprintf("%q", dir))
	}
	return nil
}
