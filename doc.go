// Package shellsup is the module root: the release version (Version, read
// from the VERSION file beside it, the one place the version is written;
// go:embed reaches only files at or below the package) and the plan of the
// module, one noun per package. A test keeps the plan equal to the module's
// packages.
//
// Users start with the command (cmd/shellsup) or a binding: Python in
// bindings/python, Go in github.com/shellsup/shellsup/bindings/go.
//
// The run, from the command line down:
//
//	cmd/shellsup          the command: main calls internal/cli
//	internal/cli          the command line: flags into supervisor.Args, help, version, subcommands
//	supervisor            the run: spawn, output, deadline, cleanup, report
//	request               the rules of a request: limits, deadline, cleanup bounds
//	protocol              the wire format: msgpack frames to and from the parent
//	decoder               the capture: raw bytes into bounded UTF-8 text
//	redact                the secrets replaced in that text
//	spill                 the private files that keep the whole raw output
//	environ               the command's environment
//	credential            the user bash runs as (--user)
//	reaper                the cleanup: find, kill and reap every descendant
//	cgroup                the cgroup tier: a leaf per run
//	pidns                 the PID-namespace tier (--pidns)
//	sandbox               the opt-in sandbox: Landlock rules, a network namespace, a private TMPDIR
//	tidy                  --tidy: escape sequences, redraws and repeats out of the captured text
//	ports                 the ports a job's processes listen on
//	internal/linux        the system-call wrappers (EINTR retried here only)
//	internal/procstat     the one /proc/PID/stat parser
//	internal/affinity     one CPU for the threads during start-up
//	internal/embedmode    the hand-off to a Go program that is its own shellsup
//
// The Go binding:
//
//	bindings/go           Run and Start for Go harnesses
//	bindings/go/embedded  a Go program as its own shellsup
//
// Tests and tools:
//
//	internal/proctest       test support for suites that run real processes
//	reaper/reapertest       the leak check: no test leaves a process behind
//	decoder/internal/pydiff the capture, for the Python decoder fuzz comparison
//	cmd/shellsup-bench      make bench
//	cmd/shellsup-compare    make compare: the README's "why not" table
//	cmd/shellsup-soak       make soak
package shellsup
