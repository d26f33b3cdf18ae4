package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	shellsup "github.com/shellsup/shellsup"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/request"
	"github.com/shellsup/shellsup/supervisor"
)

// Usage is the text of shellsup --help; its numbers come from package
// request, the one home of the limits.
var Usage = fmt.Sprintf(`usage: shellsup [options] -- COMMAND
       shellsup decode < FRAMES
       shellsup sweep [--cgroup PATH]

Runs /bin/bash -lc COMMAND (--no-login: bash --norc -c) with stdin /dev/null,
streams its output, and when it finishes, times out or is cancelled, kills
and reaps every process it started before reporting.

The COMMAND is one argument and follows "--"; a word before it that is not
an option or a subcommand is refused (with a "did you mean" for a typo).

Every DURATION is a number of seconds (1.5) or a number with a unit ms, s,
m, h or d (500ms, 2s, 1m, 1h30m, 7d); every BYTES a whole number with an
optional K, M, G or T (powers of 1024: 64K, 1M, 65536).

options:
  --timeout DURATION stop the command after this long (default %gs, at most
                     %gs; longer: --lifetime)
  --cwd DIR          working directory (default: the current one)
  --budget BYTES     capture budget shared by stdout and stderr (default %d, at most %d)
  --grace DURATION   SIGTERM → SIGKILL grace at cleanup (default %gs, at most %gs)
  --no-login         bash --norc -c instead of bash -lc: no profile or rc file is read
  --scrub-env        drop variables whose names mark credentials (*_TOKEN, AWS_*, ...)
  --agent-env        set PAGER=cat, GIT_PAGER=cat, NO_COLOR=1, TERM=dumb, a UTF-8
                     LC_ALL and LANG, ...
  --agent            an agent harness's defaults: --agent-env, --scrub-env,
                     --tidy and --capture head+tail, still a login shell; an
                     option given as well wins (--agent --capture head,
                     --agent --scrub-env=false)
  --env-allow NAME,...
                     pass only these variables (NAME or a PREFIX*; repeatable)
                     plus PATH, HOME, LANG, LC_*, TERM, TZ, USER, LOGNAME,
                     SHELL, TMPDIR; with --scrub-env a name listed exactly is
                     kept, the rest is still scrubbed
  --workspace DIR    the working directory (default DIR) must lie in DIR, links followed
  --frames           machine mode: msgpack frames on stdout, control frames on stdin
  --pidns            run the command in its own PID namespace (see the README)
  --pidns-auto       --pidns where no cgroup v2 leaf can be made, or the
                     command could leave it (a delegated cgroup), and the
                     namespaces can be had; else the tiers there are (the
                     bindings' default)
  --user USER[:GROUP]
                     run the command as USER (a name or uid; shellsup runs as
                     root, or with CAP_SETUID, CAP_SETGID and CAP_KILL): USER's
                     groups from /etc/group, or only GROUP; HOME, USER, LOGNAME
                     set; no capabilities, no_new_privs (README, "Running as
                     another user")
  --sandbox MODE     read-only, workspace-write (needs --workspace) or none
                     (default): what the command may write (docs/sandbox.md)
  --protect DIR      with workspace-write, keep DIR of the workspace read-only
                     (repeatable)
  --no-network       the command gets its own network with only loopback up
  --max-procs N      at most N processes and threads at once (pids.max)
  --max-memory BYTES at most this much memory, no swap (memory.max); 512K, 64M, 1G
  --cgroup PATH      make the run's leaf cgroup under this delegated cgroup v2
  --no-cgroup        make no cgroup leaf: the subreaper floor (and --pidns) only
  --require TIER     refuse to run unless TIER (cgroup or pidns) is in force
  --spill DIR        write the raw stdout and stderr to private files in a new
                     directory under DIR (named in totals); DIR is made (0700)
                     if it does not exist
  --spill-max BYTES  limit of each spill file (default 256M)
  --capture MODE     head (default), tail or head+tail: which part of the output
                     the capture keeps when it exceeds the budget
  --lifetime DURATION
                     a job's lifetime instead of --timeout (at most 7d: 1h)
  --redact           replace secrets (tokens, keys) in the captured text
  --redact-pattern RE  a further secret pattern (Go regexp; repeatable; implies --redact)
  --tidy             tidy the captured text: no escape sequences, no progress
                     redraws, repeated lines folded, binary output named
                     (docs/tidy.md)
  --quiet            human mode: errors only (no notice; the summary line only
                     when something went wrong)
  --pty              run bash on a new pseudo-terminal (docs/interactive.md)
  --pty-size COLSxROWS  the terminal's size (default 80x24)
  --stdin MODE       null (default) or pipe: bash's stdin fed by input frames
  --idle-timeout DURATION  end the run after this long without output (exit 124)
  --stop-on-input    with --pty: end the run once the program waits for input
                     (status needs_input, exit 124)
  --version          print the version
  --help             print this help

shellsup decode reads a frames stream (shellsup --frames ... | shellsup decode)
and prints each frame as one JSON object per line.

shellsup sweep kills and removes the leaf cgroups of shellsups that died
(e.g. SIGKILLed) and prints what it removed; every run does the same first.

exit status: the command's (128+N if a signal N ended it); 124 timed out;
128+N cancelled by signal N (SIGINT 130, SIGTERM 143), 130 other cancels;
141 human mode's stdout closed (| head); 125 shellsup failed; 126/127 bash
could not be run / not found.
`, request.DefaultTimeout, request.MaxTimeout, request.DefaultBudget, request.MaxBudget,
	request.DefaultGrace, request.MaxGrace)

// ErrVersion is returned by Parse when --version was asked for.
var ErrVersion = errors.New("version requested")

// VersionLine is what shellsup --version prints.
func VersionLine() string {
	return fmt.Sprintf("shellsup %s (protocol %d)", shellsup.Version(), protocol.Version)
}

// Run runs the supervisor for the command line argv (without the program
// name), or prints the help or the version, or runs a subcommand (decode,
// sweep: the first argument, which no option can be), and returns the exit
// code.
//
// Run is the entry point of both the shellsup binary and a harness
// re-executed by the embedded mode (bindings/go/embedded). A mode that the
// supervisor re-executes itself into (an init process, say) must be
// recognised here and in embedded.Init too, not only in cmd/shellsup:
// in embedded mode the executable is the harness.
func Run(argv []string, stdio supervisor.Stdio) int {
	if len(argv) > 0 {
		switch argv[0] {
		case "decode":
			return decodeMain(argv[1:])
		case "sweep":
			return sweep(argv[1:], stdio.Stdout, stdio.Stderr)
		}
	}
	args, err := Parse(argv)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdio.Stdout, Usage)
		return 0
	case errors.Is(err, ErrVersion):
		fmt.Fprintln(stdio.Stdout, VersionLine())
		return 0
	}
	return supervisor.Main(args, err, stdio)
}

// StdStreams are the process's own standard streams.
func StdStreams() supervisor.Stdio {
	return supervisor.Stdio{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
}

// Parse reads the options and the COMMAND. --frames is looked for first, so
// that even a malformed command line is reported in the mode the caller
// asked for. A bad option is a *request.ValidationError that spells the
// option as the user typed it.
func Parse(argv []string) (supervisor.Args, error) {
	var a supervisor.Args
	for _, s := range options(argv) {
		if s == "--frames" || s == "-frames" {
			a.Frames = true
		}
	}
	fs := flag.NewFlagSet("shellsup", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by supervisor.Main, in the right mode
	fs.StringVar(&a.Timeout, "timeout", "", "")
	fs.StringVar(&a.Cwd, "cwd", "", "")
	fs.StringVar(&a.Budget, "budget", "", "")
	fs.StringVar(&a.Grace, "grace", "", "")
	fs.BoolVar(&a.Frames, "frames", a.Frames, "")
	fs.BoolVar(&a.PIDNamespace, "pidns", false, "")
	fs.BoolVar(&a.PIDNamespaceAuto, "pidns-auto", false, "")
	fs.StringVar(&a.MaxProcs, "max-procs", "", "")
	fs.StringVar(&a.MaxMemory, "max-memory", "", "")
	fs.StringVar(&a.Cgroup, "cgroup", "", "")
	fs.BoolVar(&a.NoCgroup, "no-cgroup", false, "")
	fs.StringVar(&a.Require, "require", "", "")
	fs.BoolVar(&a.NoLogin, "no-login", false, "")
	fs.BoolVar(&a.ScrubEnv, "scrub-env", false, "")
	fs.BoolVar(&a.AgentEnv, "agent-env", false, "")
	fs.BoolVar(&a.Agent, "agent", false, "")
	fs.Func("env-allow", "", func(s string) error {
		a.EnvAllow = append(a.EnvAllow, s)
		return nil
	})
	fs.StringVar(&a.Workspace, "workspace", "", "")
	fs.StringVar(&a.User, "user", "", "")
	sandboxFlags(fs, &a)
	outputFlags(fs, &a.Output)
	interactiveFlags(fs, &a.Interactive)
	showVersion := fs.Bool("version", false, "")
	if err := fs.Parse(argv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return a, err
		}
		return a, &request.ValidationError{Msg: describeFlagError(err, argv, fs) + "; see shellsup --help"}
	}
	if *showVersion {
		return a, ErrVersion
	}
	a.Given = given(fs)
	if err := refuseEmpty(fs, "workspace"); err != nil {
		return a, err
	}
	if err := refuseEmptyUser(fs); err != nil {
		return a, err
	}
	a.Command = fs.Args()
	if err := requireDoubleDash(argv, a.Command, fs); err != nil {
		return a, err
	}
	return a, nil
}

// given names the options set on the command line, for --agent's
// overrides.
func given(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// refuseEmpty refuses an option given with an empty value where "" would
// silently mean "not given": --workspace "" must not drop the check.
func refuseEmpty(fs *flag.FlagSet, name string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name && f.Value.String() == "" {
			err = &request.ValidationError{Msg: fmt.Sprintf(`%s must be a directory (got "")`, name)}
		}
	})
	return err
}

// refuseEmptyUser refuses --user "": it must not mean "as shellsup's user".
func refuseEmptyUser(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "user" && f.Value.String() == "" {
			err = request.ValidateUser("")
		}
	})
	return err
}

// options is the part of argv before "--".
func options(argv []string) []string {
	for i, s := range argv {
		if s == "--" {
			return argv[:i]
		}
	}
	return argv
}

// describeFlagError rewords the flag package's errors, naming the option
// the way the user typed it ("-V" stays "-V", "--V" stays "--V").
func describeFlagError(err error, argv []string, fs *flag.FlagSet) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		spelled := typed(argv, name)
		if near := closest(spelled, words(fs)); near != "" {
			return fmt.Sprintf("unknown option %q: did you mean %q?", spelled, near)
		}
		return fmt.Sprintf("unknown option %q (options: %s)", spelled, strings.Join(optionNames(fs), ", "))
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Sprintf("option %q needs a value", typed(argv, name))
	}
	if arg, ok := strings.CutPrefix(msg, "bad flag syntax: "); ok {
		return fmt.Sprintf("malformed option %q (write --name or --name=value)", arg)
	}
	var value, name string
	if _, err := fmt.Sscanf(msg, "invalid boolean value %q for -%s", &value, &name); err == nil {
		return fmt.Sprintf("option %q takes no value (got %q)", typed(argv, strings.TrimSuffix(name, ":")), value)
	}
	return msg
}

// typed finds the option called name in argv and returns it as written,
// without any "=value"; "--"+name if it cannot be found.
func typed(argv []string, name string) string {
	for _, s := range options(argv) {
		spelled, _, _ := strings.Cut(s, "=")
		if spelled == "-"+name || spelled == "--"+name {
			return spelled
		}
	}
	return "--" + name
}

// outputFlags registers the options about the output and a job's lifetime.
func outputFlags(fs *flag.FlagSet, o *supervisor.OutputArgs) {
	fs.StringVar(&o.Spill, "spill", "", "")
	fs.StringVar(&o.SpillMax, "spill-max", "", "")
	fs.StringVar(&o.Capture, "capture", "", "")
	fs.StringVar(&o.Lifetime, "lifetime", "", "")
	fs.BoolVar(&o.Redact, "redact", false, "")
	fs.Func("redact-pattern", "", func(s string) error {
		o.RedactPatterns = append(o.RedactPatterns, s)
		return nil
	})
	fs.BoolVar(&o.Tidy, "tidy", false, "")
	fs.BoolVar(&o.Quiet, "quiet", false, "")
}
