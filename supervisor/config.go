package supervisor

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shellsup/shellsup/request"
)

// Args are the command line as given, before validation. Empty strings
// mean "use the default".
type Args struct {
	Timeout      string   // --timeout SECONDS
	Cwd          string   // --cwd DIR
	Budget       string   // --budget BYTES
	Grace        string   // --grace SECONDS
	Frames       bool     // --frames
	PIDNamespace bool     // --pidns
	Command      []string // the positional arguments; exactly one is allowed

	Cgroup    string // --cgroup PATH: a delegated cgroup v2 parent for the leaf
	NoCgroup  bool   // --no-cgroup: the subreaper floor only (plus --pidns)
	Require   string // --require TIER: cgroup or pidns
	MaxProcs  string // --max-procs N
	MaxMemory string // --max-memory BYTES (64M-style suffixes)

	Output OutputArgs
}

// Config is a validated run request.
type Config struct {
	Command string
	Cwd     string  // absolute and clean
	Timeout float64 // seconds
	Budget  int
	Grace   float64 // seconds
	Frames  bool

	CgroupParent string // absolute; "" means shellsup's own cgroup
	NoCgroup     bool   // make no leaf, even where one could be made
	Require      string // "", "cgroup" or "pidns"
	MaxProcs     int64  // 0: no limit
	MaxMemory    int64  // bytes; 0: no limit
	// PIDNamespace runs the command under an init of its own PID namespace.
	PIDNamespace bool

	OutputConfig
}

// timeoutDuration converts the validated timeout.
func (c Config) timeoutDuration() time.Duration { return seconds(c.Timeout) }

func (c Config) graceDuration() time.Duration { return seconds(c.Grace) }

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Validate checks every argument and resolves the working directory. The
// error, a *request.ValidationError, quotes the bad value and says what is
// allowed. The flags are parsed here; their rules live in package request.
func (a Args) Validate() (Config, error) {
	cfg := Config{Timeout: request.DefaultTimeout, Budget: request.DefaultBudget, Grace: request.DefaultGrace, Frames: a.Frames, PIDNamespace: a.PIDNamespace}
	var err error
	if cfg.Command, err = a.command(); err != nil {
		return cfg, err
	}
	if a.Timeout != "" {
		if cfg.Timeout, err = parseTimeout(a.Timeout); err != nil {
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
	if err = a.validateContainment(&cfg); err != nil {
		return cfg, err
	}
	if err = a.validateOutput(&cfg); err != nil {
		return cfg, err
	}
	if cfg.Cwd, err = resolveCwd(a.Cwd); err != nil {
		return cfg, err
	}
	return cfg, nil
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

func parseTimeout(s string) (float64, error) {
	v, ok := parseSeconds(s)
	if !ok {
		return 0, request.TimeoutNotANumber(s)
	}
	return v, request.ValidateTimeout(v, s)
}

func parseGrace(s string) (float64, error) {
	v, ok := parseSeconds(s)
	if !ok {
		return 0, request.GraceNotANumber(s)
	}
	return v, request.ValidateGrace(v, s)
}

// parseSeconds parses a number of seconds. inf, nan and numbers too large
// for a float64 (which ParseFloat rounds to ±Inf) parse here; the range
// check that follows refuses them.
func parseSeconds(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v, err == nil || math.IsInf(v, 0)
}

func parseBudget(s string) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, request.BudgetNotWhole(s)
	}
	return v, request.ValidateBudget(v, s)
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

// invalid is a validation error: it quotes the value and says what is allowed.
var invalid = request.Invalidf

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, " ")
}
