package supervisor

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/protocol"
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
}

// Config is a validated run request.
type Config struct {
	Command string
	Cwd     string  // absolute and clean
	Timeout float64 // seconds
	Budget  int
	Grace   float64 // seconds
	Frames  bool
	// PIDNamespace runs the command under an init of its own PID namespace.
	PIDNamespace bool
}

// timeoutDuration converts the validated timeout.
func (c Config) timeoutDuration() time.Duration { return seconds(c.Timeout) }

func (c Config) graceDuration() time.Duration { return seconds(c.Grace) }

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Validate checks every argument and resolves the working directory. The
// error, a *protocol.ValidationError, quotes the bad value and says what is
// allowed.
func (a Args) Validate() (Config, error) {
	cfg := Config{Timeout: protocol.DefaultTimeout, Budget: decoder.DefaultBudget, Grace: protocol.DefaultGrace, Frames: a.Frames, PIDNamespace: a.PIDNamespace}
	var err error
	if cfg.Command, err = a.command(); err != nil {
		return cfg, err
	}
	if a.Timeout != "" {
		if cfg.Timeout, err = parseSeconds("timeout", a.Timeout, "greater than 0 and at most 600"); err != nil {
			return cfg, err
		}
		if err := protocol.ValidateTimeout(cfg.Timeout, a.Timeout); err != nil {
			return cfg, err
		}
	}
	if a.Grace != "" {
		if cfg.Grace, err = parseSeconds("grace", a.Grace, "at least 0 and at most 60"); err != nil {
			return cfg, err
		}
		if err := protocol.ValidateGrace(cfg.Grace, a.Grace); err != nil {
			return cfg, err
		}
	}
	if a.Budget != "" {
		if cfg.Budget, err = parseBudget(a.Budget); err != nil {
			return cfg, err
		}
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
		return a.Command[0], protocol.ValidateCommand(a.Command[0])
	}
	return "", invalid("COMMAND must be one argument, the bash -c string (got %d arguments: %s); quote it: shellsup -- %s",
		len(a.Command), quoteAll(a.Command), strconv.Quote(strings.Join(a.Command, " ")))
}

// parseSeconds parses a number of seconds; inf and nan parse here and are
// refused by the range check that follows.
func parseSeconds(name, s, allowed string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil && !math.IsInf(v, 0) {
		return 0, invalid("%s must be a number of seconds %s (got %q)", name, allowed, s)
	}
	if math.IsInf(v, 0) {
		return 0, invalid("%s must be %s seconds (got %s)", name, allowed, s)
	}
	return v, nil
}

func parseBudget(s string) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, invalid("budget must be a whole number of bytes, at least %d and at most %d (got %q)", decoder.MinBudget, decoder.MaxBudget, s)
	}
	return v, protocol.ValidateBudget(v, s)
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
var invalid = protocol.Invalidf

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, " ")
}
