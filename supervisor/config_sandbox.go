package supervisor

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/shellsup/shellsup/request"
	"github.com/shellsup/shellsup/sandbox"
)

// sandboxPolicy checks --sandbox, --protect and --no-network against the
// resolved workspace ws; nil when they ask for nothing.
func (a Args) sandboxPolicy(ws string) (*sandbox.Policy, error) {
	if err := request.ValidateSandbox(a.Sandbox, ws != "", len(a.Protect)); err != nil {
		return nil, err
	}
	mode := a.Sandbox
	if mode == "" {
		mode = sandbox.ModeNone
	}
	p := &sandbox.Policy{Mode: mode, NoNetwork: a.NoNetwork}
	if mode == sandbox.ModeWorkspaceWrite {
		p.Workspace = ws
	}
	for _, dir := range a.Protect {
		real, err := resolveProtect(dir, ws)
		if err != nil {
			return nil, err
		}
		p.Protect = append(p.Protect, real)
	}
	if !p.Active() {
		return nil, nil
	}
	// The rules are made later, on these very directories or not at all.
	if err := p.Pin(); err != nil {
		return nil, invalid("sandbox %s: %v", mode, err)
	}
	return p, nil
}

// resolveProtect resolves a --protect directory (relative to the
// workspace) with every link followed; it must be an existing directory
// in the workspace.
func resolveProtect(dir, ws string) (string, error) {
	if err := request.ValidateProtect(dir); err != nil {
		return "", err
	}
	path := dir
	if !filepath.IsAbs(path) {
		path = filepath.Join(ws, path)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", invalid("protect %q cannot be resolved (%q): %v", dir, path, err)
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return "", invalid("protect %q is not a directory", dir)
	}
	if rel, err := filepath.Rel(ws, real); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", invalid("protect %q resolves to %q, outside workspace %q: only a directory of the workspace can be kept read-only", dir, real, ws)
	}
	return real, nil
}
