// Package request says what a run request may be: the range of its timeout
// and grace, its capture budget and the truncation marker that budget must
// hold, the size of its command, the caps of the cgroup tier, a job's
// lifetime and the limit of its spill files, and a run's one Deadline (a
// timeout or a lifetime, its kind saying which rule it follows). It is the one home of these
// rules; the shellsup command line and the Go binding both check a request
// here, after turning their own input (flag text, time.Duration) into plain
// numbers.
//
// The guarantee: every refusal is a *ValidationError whose message quotes
// the bad value and says what is allowed (README, "Command line"), and a request
// these validators accept is one shellsup runs.
//
// It parses only the texts whose form is itself part of a rule: a byte
// count ("64M", ParseBytes: every byte option of the command line), a
// duration ("2s", "1.5", ParseDuration: every time option), a lifetime
// ("1h", ParseLifetime) and a number of seconds (ParseSeconds).
//
// The non-goal: the package touches no file or process; the working
// directory, the spill directory and the environment are checked by their
// callers.
package request
