package shellsup

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shellsup/shellsup/redact"
	"github.com/shellsup/shellsup/request"
)

// Defaults applied to a zero Request field.
const (
	DefaultTimeout = time.Duration(request.DefaultTimeout * float64(time.Second)) // 120 s
	DefaultGrace   = time.Duration(request.DefaultGrace * float64(time.Second))   // 2 s, applied by shellsup
	DefaultBudget  = request.DefaultBudget                                        // 65536 bytes
)

// Stream names passed to Request.Progress.
const (
	Stdout = "stdout"
	Stderr = "stderr"
)

// Request describes one run of shellsup. The zero value of every field but
// Command means "the default". Run checks every field before it spawns
// anything.
type Request struct {
	// Command is the bash -c string; shellsup runs /bin/bash -lc Command
	// (/bin/bash --norc -c Command with NoLogin) with stdin /dev/null. It must be non-empty, valid UTF-8, free of NUL
	// bytes and at most request.MaxCommandBytes (131071) bytes: the kernel
	// passes at most 128 KiB, NUL included, in one argument.
	Command string

	// Cwd is the working directory. "" means the calling process's current
	// directory; a relative path is taken relative to it. It must exist and
	// be a directory. Result.Cwd reports it resolved and absolute.
	Cwd string

	// Timeout stops the command after this long. 0 means DefaultTimeout
	// (120 s); otherwise it must be greater than 0 and at most 600 s.
	Timeout time.Duration

	// Env is the environment of shellsup, which bash inherits, as
	// "KEY=value" entries. If Env is nil, shellsup gets the calling
	// process's environment (os.Environ at the time of Run). If Env is
	// non-nil, even empty, it replaces that environment; Run copies it, so
	// the caller may reuse the slice. This is eino's convention. An
	// environment without HOME gives the command HOME=/nonexistent, never
	// the home (and profile) of shellsup's user from the password database.
	Env []string

	// Budget is the capture budget in bytes, shared by stdout and stderr
	// (README, "Output capture"). 0 means DefaultBudget (65536); otherwise it must
	// hold the truncation marker plus one byte (at least request.MinBudget)
	// and be at most request.MaxBudget (512 KiB).
	Budget int

	// Grace is how long cleanup waits between SIGTERM and SIGKILL. nil
	// means shellsup's default, DefaultGrace (2 s). A pointer to 0 means no
	// grace: SIGKILL follows SIGTERM at once. Otherwise it must be at most
	// 60 s. With Go 1.26: Grace: new(500 * time.Millisecond).
	Grace *time.Duration

	// PIDNamespace runs the command under an init of its own PID namespace
	// (shellsup --pidns): when shellsup dies for any reason, the kernel
	// kills every process of the command. Where the namespaces cannot be
	// made, Run returns an *Error of category "containment_unavailable".
	//
	// Without it (and without NoPIDNamespace) the run gets a namespace
	// only where shellsup makes no cgroup v2 leaf (an unprivileged user
	// with no delegated cgroup, say), or one the unprivileged command could
	// leave (a delegated cgroup), and the namespaces can be had
	// (shellsup --pidns-auto); elsewhere it goes on in the tiers it has.
	// Result.Cleanup.Tier says which it was.
	PIDNamespace bool

	// NoPIDNamespace never runs the command in a PID namespace: where
	// shellsup makes no cgroup leaf, the subreaper tier alone, in which a
	// command that kills shellsup can leave daemons running (README,
	// "Tiers"). It cannot be combined with PIDNamespace.
	NoPIDNamespace bool

	// User, if not "", runs the command as another user (shellsup --user
	// USER[:GROUP]): USER is a name of shellsup's /etc/passwd or a numeric
	// uid, GROUP a name of /etc/group or a numeric gid. Without GROUP the
	// command gets the user's group and supplementary groups (initgroups);
	// with it, that group only. HOME (the passwd entry's, else
	// /nonexistent), USER and LOGNAME are the user's; the command has no
	// capabilities and no_new_privs. shellsup must run as root or with
	// CAP_SETUID, CAP_SETGID and CAP_KILL; otherwise Run returns an *Error of
	// category "containment_unavailable". A malformed value is a validation
	// *Error before anything is spawned; an unknown user or group, one
	// shellsup reports (category "validation"), with nothing run.
	User string

	// Progress, if not nil, receives the captured text as it arrives:
	// stream is Stdout or Stderr, and joining the texts of one stream gives
	// that stream's captured text, truncation marker included. It is
	// called from the goroutine that called Run, one call at a time, in
	// the order shellsup captured the text.
	//
	// If it returns an error, Run cancels the run, calls Progress no more,
	// waits for the cleanup, and returns the Result together with an error
	// that wraps the callback's (errors.Is finds it). That Result is the
	// complete report of the run, with Cancelled set unless the command
	// had already finished.
	Progress func(stream, text string) error

	// MaxProcs caps the processes and threads the command may have at once
	// (shellsup --max-procs, pids.max). 0 means no limit; otherwise at most
	// 4194304. Where no pids controller can be had, shellsup refuses with
	// CategoryContainmentUnavailable rather than run without the limit.
	MaxProcs int64

	// MaxMemory caps the command's memory in bytes, with no swap (shellsup
	// --max-memory, memory.max). 0 means no limit; otherwise at least
	// 4 MiB. Refused like MaxProcs where no memory controller can be had.
	MaxMemory int64
	// NoLogin runs /bin/bash --norc -c instead of the login shell
	// /bin/bash -lc: no profile or rc file is read (shellsup --no-login).
	NoLogin bool

	// ScrubEnv drops from the command's environment the variables whose
	// names mark credentials (*_TOKEN, AWS_*, ... : the list in the README,
	// "The command's environment"; shellsup --scrub-env).
	ScrubEnv bool

	// AgentEnv sets PAGER=cat, GIT_PAGER=cat, NO_COLOR=1, TERM=dumb and the
	// rest of the README's list, over what the environment says
	// (shellsup --agent-env).
	AgentEnv bool

	// EnvAllow, if not empty, is an allow-list (shellsup --env-allow): the
	// command gets only the variables it names — each entry a name, or a
	// prefix ending in "*" (LC_*), case-sensitive — plus PATH, HOME, LANG,
	// LC_*, TERM, TZ, USER, LOGNAME, SHELL and TMPDIR. With ScrubEnv, a
	// name listed exactly passes even if it looks like a credential; one
	// passed by a prefix or the base is still scrubbed. AgentEnv's settings
	// are added after it; with User, HOME, USER and LOGNAME are the user's.
	// A bad name (empty, a bare "*", "*" not at the end, or containing "=",
	// ",", whitespace, a control character or NUL) is a validation *Error
	// quoting it. nil and an empty slice both mean no allow-list: to pass
	// only the base, name one of it ([]string{"PATH"}).
	EnvAllow []string

	// Workspace, if not "", is the directory the working directory must
	// be, or lie below, with every symbolic link followed; Cwd "" then
	// means Workspace. A Cwd outside it is a validation *Error quoting both
	// (shellsup --workspace). It checks where the command starts, not where
	// it goes.
	Workspace string

	// Sandbox, if not "" or "none", restricts what the command may write
	// (shellsup --sandbox, docs/sandbox.md): "read-only" allows writes
	// only to a private TMPDIR (0700, removed at cleanup) and /dev/null,
	// /dev/zero and /dev/full; "workspace-write" adds Workspace
	// (required), less the directories Protect names (shellsup --protect,
	// relative to the workspace). The kernel (Landlock) enforces it on
	// bash and every process it starts; where it cannot, Run refuses with
	// an *Error of category "containment_unavailable" and runs nothing.
	Sandbox string
	Protect []string

	// Network, if it points to false, gives the command a network of its
	// own with only loopback up (shellsup --no-network): its own servers
	// on 127.0.0.1 answer it, the host's listeners and the outside do not
	// (unprivileged too, in the PID namespace the default gives such a
	// run); where no namespace can be made (unprivileged with
	// NoPIDNamespace, say), Landlock TCP rules and a seccomp filter deny
	// every TCP connect and bind, Multipath TCP and Fast Open instead, UDP
	// staying open (Result.Sandbox.Network says which). nil, or true, is
	// the host's network. With Go 1.26: Network: new(false).
	Network *bool

	// Redact replaces secrets (built-in patterns for common token shapes)
	// in the captured text and progress (shellsup --redact).
	// RedactPatterns adds regular expressions (Go syntax) whose matches are
	// replaced too, and implies Redact (shellsup --redact-pattern).
	Redact         bool
	RedactPatterns []string

	// Tidy tidies the captured text and progress (shellsup --tidy,
	// docs/tidy.md): escape sequences and controls removed, carriage
	// returns and backspaces applied (a redrawn progress line keeps its
	// final state), runs of identical lines folded, a binary stream
	// replaced by one line. The budget counts the tidied text; the spill
	// files keep the raw bytes.
	Tidy bool

	// Capture says which part of the output the totals keep when it
	// exceeds the budget: "" or "head" (the default), "tail", or
	// "head+tail" (shellsup --capture).
	Capture string

	// Agent is one switch for an agent harness's defaults (shellsup
	// --agent): AgentEnv, ScrubEnv, tidied output (--tidy) and Capture
	// "head+tail"; bash stays a login shell. A Capture that is not "" wins
	// over its head+tail. To leave out one of the other parts, set the
	// parts wanted one by one instead of Agent (a false bool cannot be
	// told from one not set).
	Agent bool

	// Lifetime makes the run a job (shellsup --lifetime instead of
	// --timeout): it is stopped, as by a timeout, once it has run this long.
	// 0 means no lifetime for Run (Timeout applies) and DefaultLifetime
	// (1 h) for Start; otherwise it must be greater than 0 and at most
	// MaxLifetime (7 days). Timeout and Lifetime exclude each other.
	Lifetime time.Duration

	// Spill is a directory where shellsup keeps every raw byte of stdout
	// and stderr (shellsup --spill): it makes a new private directory in
	// it (0700) holding the files stdout and stderr (0600). Spill must
	// exist, be a directory and not a symbolic link, be writable, and not be
	// group- or world-writable. "" means no spill files for Run; Start then
	// makes a private temporary directory of its own and removes it when
	// the job has ended (Job.Read keeps working from the files it opened).
	Spill string

	// SpillMax is the limit of each spill file in bytes (shellsup
	// --spill-max); past it bytes are counted and dropped. 0 means
	// DefaultSpillMax (256 MiB). Run refuses it without Spill; Start
	// applies it to the directory it makes.
	SpillMax int64

	// Binary is the shellsup executable. "" means the next of the five
	// places the package documentation lists: $SHELLSUP_BIN, the calling
	// program itself if it called embedded.Init, "shellsup" next to the
	// calling program, then "shellsup" in $PATH (read from the calling
	// process's environment, not from Env). A name without a slash is
	// looked up in $PATH. Run does not fall back from an explicit Binary or
	// $SHELLSUP_BIN that does not work.
	Binary string

	// Interactive: a terminal or a stdin pipe, and an idle timeout
	// (docs/interactive.md).
	Interactive
}

// config is a validated Request.
type config struct {
	command     string
	cwd         string
	deadline    request.Deadline // the timeout, or a job's lifetime: exactly one shellsup option
	env         []string         // nil: inherit
	budget      int              // 0: shellsup's default
	grace       *time.Duration
	pidns       bool
	user        string // "": shellsup's own user
	progress    func(stream, text string) error
	binary      string
	maxProcs    int64  // 0: no limit
	maxMemory   int64  // 0: no limit
	spill       string // "": no spill files
	spillMax    int64  // 0: shellsup's default
	shell       shellOptions
	interactive interactiveOptions

	pidnsAuto bool // --pidns-auto: neither PIDNamespace nor NoPIDNamespace
}

// shellOptions are the Request fields that pass straight to shellsup's
// flags: the shell, the environment and the output controls.
type shellOptions struct {
	noLogin, scrubEnv, agentEnv bool
	agent                       bool
	workspace                   string
	envAllow                    []string
	redact                      bool
	redactPatterns              []string
	capture                     string
	sandbox                     sandboxOptions
	tidy                        bool
}

// validate checks every field and returns the run's configuration, or a
// validation *Error quoting the bad value.
func (r Request) validate() (config, error) {
	c := config{command: r.Command, cwd: r.Cwd, budget: r.Budget,
		grace: r.Grace, pidns: r.PIDNamespace, user: r.User, progress: r.Progress, binary: r.Binary, maxProcs: r.MaxProcs, maxMemory: r.MaxMemory,
		shell: r.shellOptions()}
	checks := []func() error{
		func() error { return validateCommand(r.Command) },
		func() error { return validateDeadline(r.Timeout, r.Lifetime, &c) },
		func() error { return validateGrace(r.Grace) },
		func() error { return validateBudget(r.Budget) },
		func() error { return validateCwd(r.Cwd) },
		func() error { return validateEnv(r.Env) },
		func() error { return validateLimits(r.MaxProcs, r.MaxMemory) },
		func() error { return validatePidns(r, &c) },
		func() error { return validateUser(r.User) },
		func() error { return validatePath("workspace", r.Workspace) },
		func() error { return validateSandbox(r.Sandbox, r.Workspace, r.Protect) },
		func() error { return validateEnvAllow(r.EnvAllow) },
		func() error { return validateCapture(r.Capture) },
		func() error { return validateRedactPatterns(r.RedactPatterns) },
		func() error { return validateSpill(r.Spill, r.SpillMax, &c) },
		func() error { return validateInteractive(r.Interactive, &c) },
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return config{}, invalid(err)
		}
	}
	if r.Env != nil {
		c.env = slices.Clip(slices.Clone(r.Env))
		if c.env == nil {
			c.env = []string{} // an empty, non-nil Env: no environment at all
		}
	}
	return c, nil
}

// invalid wraps a validation failure in an *Error.
func invalid(err error) *Error {
	var ve *request.ValidationError
	if !errors.As(err, &ve) {
		ve = &request.ValidationError{Msg: err.Error()}
		err = errors.Join(ve, err)
	}
	return newError(CategoryValidation, ve.Msg, err)
}

func validateCommand(command string) error {
	if err := request.ValidateCommand(command); err != nil {
		return err
	}
	if i := strings.IndexByte(command, 0); i >= 0 {
		return &request.ValidationError{Msg: fmt.Sprintf("command must not contain a NUL byte (found at byte %d of %s)", i, clip(command))}
	}
	return nil
}

// validateDeadline makes the run's one deadline: a lifetime when Lifetime
// is set (see validateLifetime), else the timeout, DefaultTimeout when 0.
func validateDeadline(timeout, lifetime time.Duration, c *config) error {
	if lifetime != 0 {
		return validateLifetime(timeout, lifetime, c)
	}
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	c.deadline = request.Deadline{Kind: request.KindTimeout, Seconds: timeout.Seconds()}
	return c.deadline.Validate(timeout.String())
}

func validateGrace(g *time.Duration) error {
	if g == nil {
		return nil
	}
	return request.ValidateGrace(g.Seconds(), g.String())
}

// validateLimits checks MaxProcs and MaxMemory; 0 means no limit.
func validateLimits(procs, memory int64) error {
	if procs != 0 {
		if err := request.ValidateMaxProcs(procs, strconv.FormatInt(procs, 10)); err != nil {
			return err
		}
	}
	if memory != 0 {
		return request.ValidateMaxMemory(memory, strconv.FormatInt(memory, 10))
	}
	return nil
}

// validatePidns refuses PIDNamespace with NoPIDNamespace and chooses the
// flag: --pidns, --pidns-auto (the default) or neither.
func validatePidns(r Request, c *config) error {
	if r.PIDNamespace && r.NoPIDNamespace {
		return &request.ValidationError{Msg: "PIDNamespace and NoPIDNamespace cannot both be true (got both true)"}
	}
	c.pidnsAuto = !r.PIDNamespace && !r.NoPIDNamespace
	return nil
}

// validateUser checks the form of User; shellsup looks the user up.
func validateUser(spec string) error {
	if spec == "" {
		return nil
	}
	return request.ValidateUser(spec)
}

func validateBudget(b int) error {
	if b == 0 {
		return nil
	}
	return request.ValidateBudget(b, strconv.Itoa(b))
}

// validateCwd checks what shellsup would refuse, so that nothing is
// spawned for a bad directory.
func validateCwd(dir string) error {
	if dir == "" {
		return nil
	}
	if strings.IndexByte(dir, 0) >= 0 || !utf8.ValidString(dir) {
		return &request.ValidationError{Msg: fmt.Sprintf("cwd must be a valid UTF-8 path without NUL bytes (got %s)", clip(dir))}
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return &request.ValidationError{Msg: fmt.Sprintf("cwd %q does not exist", dir)}
	case err != nil:
		return &request.ValidationError{Msg: fmt.Sprintf("cwd %q cannot be used: %v", dir, err)}
	case !st.IsDir():
		return &request.ValidationError{Msg: fmt.Sprintf("cwd %q is not a directory", dir)}
	}
	return nil
}

// validateEnvAllow checks every EnvAllow name as shellsup will.
func validateEnvAllow(names []string) error {
	for _, n := range names {
		if err := request.ValidateEnvAllowName(n); err != nil {
			return err
		}
	}
	return nil
}

func validateEnv(env []string) error {
	for i, kv := range env {
		if strings.IndexByte(kv, 0) >= 0 {
			return &request.ValidationError{Msg: fmt.Sprintf("env entry %d must not contain a NUL byte (got %s)", i, clip(kv))}
		}
	}
	return nil
}

// shellOptions copies the pass-through fields.
func (r Request) shellOptions() shellOptions {
	return shellOptions{noLogin: r.NoLogin, scrubEnv: r.ScrubEnv, agentEnv: r.AgentEnv, workspace: r.Workspace,
		envAllow: slices.Clone(r.EnvAllow), redact: r.Redact || len(r.RedactPatterns) > 0,
		redactPatterns: slices.Clone(r.RedactPatterns), capture: r.Capture, agent: r.Agent, tidy: r.Tidy,
		sandbox: sandboxOptions{mode: r.Sandbox, protect: slices.Clone(r.Protect), noNetwork: r.Network != nil && !*r.Network}}
}

// validatePath checks what can be checked of a directory shellsup
// resolves itself (a workspace): that it can be passed.
func validatePath(field, dir string) error {
	if strings.IndexByte(dir, 0) >= 0 || !utf8.ValidString(dir) {
		return &request.ValidationError{Msg: fmt.Sprintf("%s must be a valid UTF-8 path without NUL bytes (got %s)", field, clip(dir))}
	}
	return nil
}

// captureModes are the values of Request.Capture.
var captureModes = []string{"", "head", "tail", "head+tail"}

func validateCapture(mode string) error {
	if !slices.Contains(captureModes, mode) {
		return &request.ValidationError{Msg: fmt.Sprintf(`capture must be "head", "tail" or "head+tail" ("" means "head") (got %s)`, clip(mode))}
	}
	return nil
}

// validateRedactPatterns checks the patterns with shellsup's own check
// (redact.Compile: Go's regexp syntax, not empty, not matching the empty
// string), in its words, so that a bad one is refused before anything
// runs; a NUL byte, which no argument can carry, is the binding's to refuse.
func validateRedactPatterns(patterns []string) error {
	for i, p := range patterns {
		if strings.IndexByte(p, 0) >= 0 {
			return &request.ValidationError{Msg: fmt.Sprintf("redact pattern %d must not contain a NUL byte (got %s)", i, clip(p))}
		}
	}
	if _, err := redact.Compile(patterns); err != nil {
		return &request.ValidationError{Msg: err.Error()}
	}
	return nil
}

// clip quotes s for a message, shortened if long.
func clip(s string) string {
	if len(s) > 80 {
		return strconv.QuoteToASCII(s[:80]) + "..."
	}
	return strconv.QuoteToASCII(s)
}

// args is shellsup's command line for the run. Every option uses the
// --name=value form, so a value starting with "-" cannot be read as a flag.
func (c config) args() []string {
	args := []string{"--frames", c.deadline.Flag()}
	if c.spill != "" {
		args = append(args, "--spill="+c.spill)
	}
	if c.spillMax != 0 {
		args = append(args, "--spill-max="+strconv.FormatInt(c.spillMax, 10))
	}
	if c.cwd != "" {
		args = append(args, "--cwd="+c.cwd)
	}
	if c.budget != 0 {
		args = append(args, "--budget="+strconv.Itoa(c.budget))
	}
	if c.grace != nil {
		args = append(args, "--grace="+seconds(*c.grace))
	}
	if c.pidns {
		args = append(args, "--pidns")
	}
	if c.pidnsAuto {
		args = append(args, "--pidns-auto") // a namespace where shellsup makes no cgroup v2 leaf
	}
	if c.user != "" {
		args = append(args, "--user="+c.user)
	}
	if c.maxProcs != 0 {
		args = append(args, "--max-procs="+strconv.FormatInt(c.maxProcs, 10))
	}
	if c.maxMemory != 0 {
		args = append(args, "--max-memory="+strconv.FormatInt(c.maxMemory, 10))
	}
	args = append(args, c.shell.args()...)
	args = append(args, c.interactive.args()...)
	return append(args, "--", c.command)
}

// args are the flags for the pass-through options, "--name=value" only.
func (o shellOptions) args() []string {
	var args []string
	flag := func(on bool, name string) {
		if on {
			args = append(args, name)
		}
	}
	value := func(name, v string) {
		if v != "" {
			args = append(args, name+"="+v)
		}
	}
	flag(o.noLogin, "--no-login")
	flag(o.scrubEnv, "--scrub-env")
	flag(o.agentEnv, "--agent-env")
	if len(o.envAllow) > 0 {
		args = append(args, "--env-allow="+strings.Join(o.envAllow, ","))
	}
	value("--workspace", o.workspace)
	flag(o.redact, "--redact")
	for _, p := range o.redactPatterns {
		args = append(args, "--redact-pattern="+p)
	}
	value("--capture", o.capture)
	flag(o.tidy, "--tidy")
	flag(o.agent, "--agent")
	return append(args, o.sandbox.args()...)
}

// graceOrDefault is the grace shellsup will apply.
func (c config) graceOrDefault() time.Duration {
	if c.grace == nil {
		return DefaultGrace
	}
	return *c.grace
}

// seconds writes d as a decimal number of seconds, exactly.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}
