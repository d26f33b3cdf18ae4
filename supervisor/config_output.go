package supervisor

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/redact"
	"github.com/shellsup/shellsup/request"
	"github.com/shellsup/shellsup/spill"
)

// OutputArgs are the options about what happens to the command's output
// and how long a job lives, as given.
type OutputArgs struct {
	Spill          string   // --spill DIR
	SpillMax       string   // --spill-max BYTES
	Capture        string   // --capture head|tail|head+tail
	Lifetime       string   // --lifetime SECONDS (suffixes s, m, h, d)
	Redact         bool     // --redact
	RedactPatterns []string // --redact-pattern RE, repeatable; implies Redact
	Tidy           bool     // --tidy
	Quiet          bool     // --quiet: no summary line in human mode
}

// OutputConfig is the validated OutputArgs.
type OutputConfig struct {
	SpillDir string // "" without --spill; absolute and clean
	SpillMax int64
	Capture  decoder.Mode
	Redact   []redact.Pattern
	Redacts  bool // --redact or --redact-pattern given
	Tidy     bool // --tidy, or --agent unless --tidy was given: the captured text is tidied (package tidy)
	Quiet    bool
}

// validateOutput checks the output options of a and fills them into cfg.
// A lifetime is the run's deadline, of kind lifetime.
func (a Args) validateOutput(cfg *Config) error {
	o := a.Output
	cfg.Quiet = o.Quiet
	cfg.Tidy = o.Tidy
	var err error
	if cfg.SpillDir, cfg.SpillMax, err = parseSpill(o.Spill, o.SpillMax); err != nil {
		return err
	}
	if o.Capture != "" {
		if cfg.Capture, err = decoder.ParseMode(o.Capture); err != nil {
			return invalid("%s", err.Error())
		}
	}
	if cfg.Capture != decoder.Head && cfg.Budget < decoder.MinWindowBudget(cfg.Budget) {
		return invalid("budget must be at least %d bytes for capture %s (got %d)", decoder.MinWindowBudget(cfg.Budget), cfg.Capture, cfg.Budget)
	}
	if o.Lifetime != "" {
		if a.Timeout != "" {
			return invalid("--lifetime %q and --timeout %q exclude each other: a job has a lifetime, a call a timeout", o.Lifetime, a.Timeout)
		}
		life, err := request.ParseLifetime(o.Lifetime)
		if err != nil {
			return err
		}
		cfg.Deadline = request.Deadline{Kind: request.KindLifetime, Seconds: life}
	}
	cfg.Redacts = o.Redact || len(o.RedactPatterns) > 0
	if cfg.Redacts {
		user, err := redact.Compile(o.RedactPatterns)
		if err != nil {
			return invalid("%s", err.Error())
		}
		cfg.Redact = append(append([]redact.Pattern{}, redact.Builtin()...), user...)
	}
	return nil
}

// parseSpill checks the spill directory (made, 0700, when it does not
// exist: the one side effect of validation, which the user asked for) and
// the limit.
func parseSpill(dir, limit string) (string, int64, error) {
	if dir == "" {
		if limit != "" {
			return "", 0, invalid("--spill-max %q needs --spill DIR", limit)
		}
		return "", 0, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", 0, invalid("spill directory %q cannot be made absolute: %v", dir, err)
	}
	if err := spill.MakeDir(abs); err != nil {
		return "", 0, invalid("%s", strings.Replace(err.Error(), strconv.Quote(abs), strconv.Quote(dir), 1))
	}
	max := int64(request.DefaultSpillMax)
	if limit != "" {
		if max, err = request.ParseSpillMax(limit); err != nil {
			return "", 0, err
		}
	}
	return abs, max, nil
}

// shownCommand is the command as start and totals echo it: redacted with
// --redact, as the output is (a secret on the command line is a secret in
// the result too). bash runs the command as given.
func (c Config) shownCommand() string {
	if !c.Redacts {
		return c.Command
	}
	r := redact.New(c.Redact)
	return r.Write(c.Command) + r.Close()
}
