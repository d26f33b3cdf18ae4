package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shellsup/shellsup/credential"
	"github.com/shellsup/shellsup/request"
	"github.com/shellsup/shellsup/sandbox"
)

// Args are the command line as given, before validation. Empty strings
// mean "use the default".
type Args struct {
	Timeout      string   // --timeout DURATION (request.ParseDuration: 2s, 1.5)
	Cwd          string   // --cwd DIR
	Budget       string   // --budget BYTES (request.ParseBytes: 64K)
	Grace        string   // --grace DURATION
	Frames       bool     // --frames
	PIDNamespace bool     // --pidns
	Command      []string // the positional arguments; exactly one is allowed
	Output       OutputArgs
	Interactive  InteractiveArgs // --pty, --pty-size, --stdin, --idle-timeout

	Cgroup    string // --cgroup PATH: a delegated cgroup v2 parent for the leaf
	NoCgroup  bool   // --no-cgroup: the subreaper floor only (plus --pidns)
	Require   string // --require TIER: cgroup or pidns
	MaxProcs  string // --max-procs N
	MaxMemory string // --max-memory BYTES (64M-style suffixes)

	// The command's environment and shell (README, "The command's environment").
	NoLogin   bool   // --no-login
	ScrubEnv  bool   // --scrub-env
	AgentEnv  bool   // --agent-env
	Workspace string // --workspace DIR
	// EnvAllow are the --env-allow values as given (repeatable, each a
	// comma-separated list of names).
	EnvAllow []string

	User string // --user USER[:GROUP]

	// Agent is --agent: --agent-env, --scrub-env, --tidy and --capture
	// head+tail, each unless given (see withAgent).
	Agent bool
	// Given names the options given on the command line (without the
	// dashes), so that one given explicitly wins over --agent's default.
	Given     map[string]bool
	Sandbox   string   // --sandbox MODE (docs/sandbox.md)
	Protect   []string // --protect DIR, repeatable
	NoNetwork bool     // --no-network
	// PIDNamespaceAuto is --pidns-auto: --pidns when no v2 leaf is made.
	PIDNamespaceAuto bool
}

// Config is a validated run request.
type Config struct {
	Command string
	Cwd     string // absolute and clean
	// Deadline is the run's one time limit: --timeout (the default, 120 s)
	// or a job's --lifetime.
	Deadline request.Deadline
	Budget   int
	Grace    float64 // seconds
	Frames   bool

	CgroupParent string // absolute; "" means shellsup's own cgroup
	NoCgroup     bool   // make no leaf, even where one could be made
	Require      string // "", "cgroup" or "pidns"
	MaxProcs     int64  // 0: no limit
	MaxMemory    int64  // bytes; 0: no limit
	// PIDNamespace runs the command under an init of its own PID namespace.
	PIDNamespace bool
	// PIDNamespaceAuto does so where the run has no cgroup v2 leaf (which
	// the harness could kill if shellsup died), or one an unprivileged
	// command could leave, and the namespaces can be had; otherwise the
	// run goes on in the tiers it has.
	PIDNamespaceAuto bool

	OutputConfig
	InteractiveConfig

	NoLogin   bool   // bash --norc -c rather than the default bash -lc
	ScrubEnv  bool   // drop the variables environ.Secret names
	AgentEnv  bool   // add environ.AgentDefaults
	Workspace string // "" or the resolved workspace the working directory lies in
	// EnvAllow, when not empty, is the allow-list (--env-allow): only these
	// names (and prefixes ending in *) and environ.Base reach bash.
	EnvAllow []string

	// User, when not nil, is who bash runs as (--user), looked up in
	// /etc/passwd and /etc/group.
	User *credential.User
	// Dir is where bash starts: Cwd with every symbolic link resolved when
	// a workspace is set (the path checked against it), else Cwd.
	Dir string

	// Agent is --agent as given (its settings are in the other fields).
	Agent bool
	// Sandbox, when not nil, is what --sandbox and --no-network ask for.
	Sandbox *sandbox.Policy
}

// startDir is where bash starts: Dir, or Cwd in a Config not made by
// Validate.
func (c Config) startDir() string {
	if c.Dir != "" {
		return c.Dir
	}
	return c.Cwd
}

// lifetime is the job's lifetime in seconds, 0 for a call.
func (c Config) lifetime() float64 {
	if c.Deadline.Kind == request.KindLifetime {
		return c.Deadline.Seconds
	}
	return 0
}

func (c Config) graceDuration() time.Duration { return seconds(c.Grace) }

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Validate checks every argument and resolves the working directory. The
// error, a *request.ValidationError, quotes the bad value and says what is
// allowed. The flags are parsed here; their rules live in package request.
func (a Args) Validate() (Config, error) {
	if err := a.checkAgentBudget(); err != nil {
		return Config{}, err
	}
	cfg, err := a.withAgent().validate()
	cfg.Agent, cfg.Tidy = a.Agent, cfg.Tidy || a.agentTidy()
	return cfg, err
}

// validate is Validate once --agent's defaults are in a.
func (a Args) validate() (Config, error) {
	cfg := Config{Deadline: request.Deadline{Kind: request.KindTimeout, Seconds: request.DefaultTimeout}, Budget: request.DefaultBudget, Grace: request.DefaultGrace, Frames: a.Frames, PIDNamespace: a.PIDNamespace,
		NoLogin: a.NoLogin, ScrubEnv: a.ScrubEnv, AgentEnv: a.AgentEnv}
	cfg.PIDNamespaceAuto = a.PIDNamespaceAuto
	var err error
	if cfg.Command, err = a.command(); err != nil {
		return cfg, err
	}
	if a.Timeout != "" {
		if cfg.Deadline.Seconds, err = parseTimeout(a.Timeout); err != nil {
			return cfg, err
		}
	}
	if a.Grace != "" {
		if cfg.Grace, err = parseGrace(a.Grace); err != nil {
			return cfg, err
		}
	}
	if a.Budget != "" {
		if cfg.Budget, err = parseBudget(a.Budget); err != nil {
			return cfg, err
		}
	}
	if err := a.validateContainment(&cfg); err != nil {
		return cfg, err
	}
	if err = a.validateOutput(&cfg); err != nil {
		return cfg, err
	}
	if err = a.validateInteractive(&cfg); err != nil {
		return cfg, err
	}
	if err = a.validateWho(&cfg); err != nil {
		return cfg, err
	}
	cwd := a.Cwd
	if a.Workspace != "" {
		if cfg.Workspace, err = resolveWorkspace(a.Workspace); err != nil {
			return cfg, err
		}
		if cwd == "" {
			cwd = a.Workspace
		}
	}
	if cfg.Cwd, err = resolveCwd(cwd); err != nil {
		return cfg, err
	}
	cfg.Dir = cfg.Cwd
	if cfg.Workspace != "" {
		if cfg.Dir, err = checkInside(cfg.Cwd, a.Workspace, cfg.Workspace); err != nil {
			return cfg, err
		}
	}
	cfg.Sandbox, err = a.sandboxPolicy(cfg.Workspace)
	return cfg, err
}

// validateWho reads --env-allow and --user: what the command sees of the
// environment, and who it runs as.
func (a Args) validateWho(cfg *Config) error {
	for _, v := range a.EnvAllow {
		names, err := request.SplitEnvAllow(v)
		if err != nil {
			return err
		}
		cfg.EnvAllow = append(cfg.EnvAllow, names...)
	}
	if a.User == "" {
		return nil
	}
	var err error
	cfg.User, err = credential.Resolve(a.User)
	return err
}

func (a Args) command() (string, error) {
	switch len(a.Command) {
	case 0:
		return "", invalid("missing COMMAND: usage is shellsup [options] -- COMMAND")
	case 1:
		return a.Command[0], request.ValidateCommand(a.Command[0])
	}
	return "", invalid("COMMAND must be one argument, the bash -c string (got %d arguments: %s); quote it: shellsup -- %s",
		len(a.Command), quoteAll(a.Command), strconv.Quote(strings.Join(a.Command, " ")))
}

// parseTimeout reads --timeout, a duration (request.ParseDuration).
func parseTimeout(s string) (float64, error) {
	v, ok := request.ParseDuration(s)
	if !ok {
		return 0, request.TimeoutNotADuration(s)
	}
	return v, request.ValidateTimeout(v, s)
}

// parseGrace reads --grace, a duration (request.ParseDuration).
func parseGrace(s string) (float64, error) {
	v, ok := request.ParseDuration(s)
	if !ok {
		return 0, request.GraceNotADuration(s)
	}
	return v, request.ValidateGrace(v, s)
}

// parseBudget reads --budget, a byte count (request.ParseBytes: 64K).
func parseBudget(s string) (int, error) {
	v, err := request.ParseBytes(s)
	if err != nil {
		if _, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
			return 0, request.ValidateBudget(-1, s) // a whole number out of range, e.g. -1
		}
		return 0, request.BudgetNotAByteCount(s)
	}
	if v > request.MaxBudget {
		v = request.MaxBudget + 1 // refused below, and never wraps an int
	}
	return int(v), request.ValidateBudget(int(v), s)
}

// resolveCwd makes dir absolute (against shellsup's own working directory)
// and checks that it is an existing directory. Symbolic links are kept, as
// a shell's cd keeps them.
func resolveCwd(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", invalid("cannot determine the current directory to use as cwd: %v", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", invalid("cwd %q cannot be made absolute: %v", dir, err)
	}
	st, err := os.Stat(abs)
	switch {
	case os.IsNotExist(err):
		return "", invalid("cwd %q does not exist", dir)
	case err != nil:
		return "", invalid("cwd %q cannot be used: %v", dir, err)
	case !st.IsDir():
		return "", invalid("cwd %q is not a directory", dir)
	}
	if !strings.HasPrefix(abs, "/") || !utf8.ValidString(abs) {
		return "", invalid("cwd %q must be a valid UTF-8 path", dir)
	}
	return abs, nil
}

// resolveWorkspace makes dir absolute and resolves every symbolic link in
// it; it must be an existing directory.
func resolveWorkspace(dir string) (string, error) {
	if strings.IndexByte(dir, 0) >= 0 || !utf8.ValidString(dir) {
		return "", invalid("workspace %q must be a valid UTF-8 path without NUL bytes", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", invalid("workspace %q cannot be made absolute: %v", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	switch {
	case os.IsNotExist(err):
		return "", invalid("workspace %q does not exist", dir)
	case err != nil:
		return "", invalid("workspace %q cannot be resolved: %v", dir, err)
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return "", invalid("workspace %q is not a directory", dir)
	}
	return real, nil
}

// checkInside refuses a working directory that, with every symbolic link
// followed, is not the workspace or below it, and returns it resolved.
// given is the workspace as the user typed it, for the message.
func checkInside(cwd, given, workspace string) (string, error) {
	real, err := filepath.EvalSymlinks(cwd)
	if err != nil {
		return "", invalid("cwd %q cannot be resolved to check it lies in workspace %q: %v", cwd, given, err)
	}
	rel, err := filepath.Rel(workspace, real)
	if err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return real, nil
	}
	where := strconv.Quote(given)
	if abs, _ := filepath.Abs(given); abs != workspace {
		where += fmt.Sprintf(" (%q)", workspace)
	}
	return "", invalid("cwd %q resolves to %q, outside workspace %s: the working directory must be the workspace or lie below it, symbolic links followed",
		cwd, real, where)
}

// invalid is a validation error: it quotes the value and says what is allowed.
var invalid = request.Invalidf

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, " ")
}
