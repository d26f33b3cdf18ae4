package proctest

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellsup/shellsup/reaper/reapertest"
)

// Build is a binary built once for the whole suite.
type Build struct {
	Pkg  string  // package, relative to the module root: "./cmd/shellsup"
	Tags string  // build tags, "" for none
	Out  *string // receives the path of the built binary
}

// Config says what Main prepares before the tests run.
type Config struct {
	Helpers *Helpers // may be nil: no helper programs
	Builds  []Build
	Home    *string // if not nil, receives an empty directory to use as HOME
	// Setup, if not nil, runs after the builds, before the tests (to point
	// environment variables at what was built, say).
	Setup func() error
}

// Main is a TestMain: it runs the helper the environment names, if any;
// otherwise it makes the test binary a child subreaper, builds cfg.Builds
// (CGO_ENABLED=0) into a temporary directory, creates the clean HOME, calls
// cfg.Setup, runs the tests, and on a full run fails the suite if a registered helper was
// never started. It does not return.
func Main(m *testing.M, cfg Config) {
	cfg.Helpers.runIfAsked()
	os.Exit(run(m, cfg))
}

func run(m *testing.M, cfg Config) int {
	dir, err := prepare(cfg)
	if dir != "" {
		defer os.RemoveAll(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "proctest:", err)
		return 1
	}
	code := m.Run()
	if code == 0 && cfg.Helpers != nil && fullRun() {
		code = reportUnused(cfg.Helpers.unused())
	}
	return code
}

// prepare does everything before the tests, and returns the temporary
// directory (to remove) even when it fails.
func prepare(cfg Config) (string, error) {
	if err := reapertest.BecomeSubreaper(); err != nil {
		return "", fmt.Errorf("becoming a child subreaper: %w", err)
	}
	dir, err := os.MkdirTemp("", "shellsup-test-")
	if err != nil {
		return "", fmt.Errorf("creating the test directory: %w", err)
	}
	root, err := moduleRoot()
	if err != nil {
		return dir, err
	}
	for _, b := range cfg.Builds {
		if err := build(root, dir, b); err != nil {
			return dir, err
		}
	}
	if cfg.Home != nil {
		*cfg.Home = filepath.Join(dir, "home")
		if err := os.Mkdir(*cfg.Home, 0o755); err != nil {
			return dir, fmt.Errorf("creating a clean HOME: %w", err)
		}
	}
	if cfg.Setup != nil {
		if err := cfg.Setup(); err != nil {
			return dir, fmt.Errorf("setting up: %w", err)
		}
	}
	return dir, nil
}

// build builds b into dir, named after its package and tags.
func build(root, dir string, b Build) error {
	name := filepath.Base(b.Pkg)
	if b.Tags != "" {
		name += "-" + strings.ReplaceAll(b.Tags, ",", "-")
	}
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-tags", b.Tags, "-o", out, b.Pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s (tags %q): %w\n%s", b.Pkg, b.Tags, err, msg)
	}
	if b.Pkg == "./cmd/shellsup" && b.Tags == "" && Tier() != "" {
		if err := wrapForTier(out); err != nil {
			return fmt.Errorf("wrapping %s for the %s tier: %w", out, Tier(), err)
		}
	}
	*b.Out = out
	return nil
}

// moduleRoot is the directory of the go.mod of the package under test.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module root (go env GOMOD): %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("finding the module root: not in a module (GOMOD %q)", mod)
	}
	return filepath.Dir(mod), nil
}

// fullRun reports whether every test ran: no -run, -skip or -list.
func fullRun() bool {
	for _, name := range []string{"test.run", "test.skip", "test.list"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return true
}

// reportUnused fails the suite for helpers registered and never started.
func reportUnused(names []string) int {
	for _, name := range names {
		fmt.Fprintf(os.Stderr, "proctest: helper %q was registered but never used\n", name)
	}
	if len(names) > 0 {
		return 1
	}
	return 0
}
