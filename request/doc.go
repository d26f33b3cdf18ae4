// Package request says what a run request may be: the range of its timeout
// and grace, its capture budget and the truncation marker that budget must
// hold, and the size of its command. It is the one home of these rules; the
// shellsup command line and the Go binding both check a request here, after
// turning their own input (flag text, time.Duration) into plain numbers.
//
// The guarantee: every refusal is a *ValidationError whose message quotes
// the bad value and says what is allowed (README, "Command line"), and a request
// these validators accept is one shellsup runs.
//
// The non-goal: the package parses no text and touches no file or process;
// the working directory and the environment are checked by their callers.
package request
