// Package shellsup runs a shell command under the shellsup supervisor, for
// Go harnesses that give a model a shell tool.
//
// Run(ctx, Request) starts the shellsup binary as a helper, runs
// /bin/bash -lc Request.Command under it, streams the captured text to
// Request.Progress, and returns a Result with the keys of the shell.run
// skill (README, "Frames mode") as Go fields. It is meant to replace
// exec.CommandContext with a process-group kill and WaitDelay, which lets a
// setsid child escape and costs seconds when a background job holds a pipe.
//
// The guarantee: when Run returns a Result, every process the command
// started — background jobs, setsid daemons, double forks, nohup, TERM
// ignorers, stopped processes — has been killed and reaped by shellsup, or
// is listed in Result.Cleanup.Stragglers (a process the kernel would not
// let go, such as one in uninterruptible sleep). This holds however the run
// ends: the command exits, Request.Timeout fires, ctx is cancelled,
// Request.Progress fails, or the calling process dies. In the last case
// shellsup learns of it at once, from EOF on its control channel (its stdin)
// and from a parent-death signal, and cleans up on its own. shellsup itself
// has exited and been reaped whenever Run returns.
//
// The non-goal: without Request.Sandbox or Request.Network, Run is not a
// sandbox. The command runs as the caller's user, with the caller's
// filesystem, network and environment (or Request.Env); with them, its
// writes and network are limited (docs/sandbox.md), its reads are not. Work handed to a daemon that is not a descendant — a
// systemd-run unit, an existing tmux server, at, docker — is out of reach,
// and if shellsup itself is SIGKILLed the subreaper boundary ends with it.
// The command has no input: its stdin is /dev/null. shellsup runs in a
// process group of its own (in the caller's session), so that a command
// that stops shellsup cannot get the caller's group sent SIGHUP; a
// terminal's Ctrl-C therefore reaches only the caller, which cancels the
// run by cancelling ctx (signal.NotifyContext: CancelReason "request").
//
// Start(ctx, Request) starts the command as a job instead: a run the
// caller does not wait for (a dev server, a watcher), with a lifetime
// instead of a timeout and spill files that keep all of its output. The
// Job reads that output (Read), waits until it is ready (WaitFor: a
// pattern, a port the job itself listens on, a URL), and stops it (Kill,
// or ctx); it dies with the calling process as a run does (README, "Jobs").
//
// Errors: a non-zero exit, a timeout and a cancellation are results, not
// errors. A run that cannot happen, or whose report is lost, gives an
// *Error whose Category is one of the categories of shellsup's error frame
// (validation, containment_unavailable, exec_failed, internal) or the
// binding's own (not_found, protocol). Error.IsRetryable says whether
// running the same request again may help.
//
// Run and Start look for the shellsup binary in five places, and take the
// first that is set or holds one:
//
//  1. Request.Binary, as given (a name without a slash is looked up in $PATH);
//  2. $SHELLSUP_BIN (BinaryEnv), in the calling process's environment;
//  3. the calling program itself, if it called embedded.Init (package
//     bindings/go/embedded): it re-executes itself as the supervisor;
//  4. "shellsup" in the directory of the calling program (os.Executable),
//     where a release archive or `go build -o` puts it beside the harness;
//  5. "shellsup" in the absolute directories of $PATH (`go install
//     ./cmd/shellsup` puts it in $(go env GOPATH)/bin); an empty or relative
//     element is skipped, as it names the current directory.
//
// A place that is set but holds no executable (1–3) is an error, never a
// fall-through to the next; the not_found error lists every place looked at.
//
// The five places are looked at once per process for each set of inputs
// (Request.Binary, $SHELLSUP_BIN, $PATH, the embedded registration): the
// first Run or Start copies the binary into a sealed memfd, and every later
// Run, Start and sweep with the same inputs executes that copy
// (/proc/self/fd/3), so a command that replaces the file or plants a
// shellsup earlier on $PATH cannot reach a later run; the embedded mode
// re-executes /proc/self/exe, the running image, not its path. The first
// lookup trusts the file system: the binary and the directories above it
// must not be writable by the command's uid before then.
//
// The module needs Go 1.26 or later and has no release tag yet: a module of
// your own points at a checkout with a replace directive (bindings/go
// README, "Use it from your own module").
//
// It speaks shellsup's frames protocol (the protocol package) over the
// binary's stdin and stdout. shellsup runs only on Linux; elsewhere Run
// returns an error wrapping ErrUnsupported.
package shellsup
