// Package embedded lets a Go program be its own shellsup, so that a harness
// ships as one binary: no shellsup executable to install next to it.
//
// Call Init first thing in main:
//
//	func main() {
//		embedded.Init() // returns at once, unless this process is the supervisor
//		...
//		res, err := shellsup.Run(ctx, shellsup.Request{Command: "make test"})
//	}
//
// Init registers the program's own executable (os.Executable) with the
// binding. When Request.Binary and $SHELLSUP_BIN are both unset, Run then
// starts the supervisor by re-executing the program with a hidden marker in
// its environment. In that re-executed process, Init sees the marker,
// removes it from the environment (the command never sees it), runs the
// supervisor on the command line the binding passed — exactly shellsup's
// command line — and exits with shellsup's exit code: it never returns
// there.
//
// This is the re-exec pattern, so the usual caveats hold: package init
// functions run in the supervisor process too before Init is reached (keep
// them free of side effects such as opening files or starting servers), and
// the program's binary must still exist while runs start (it is re-executed
// through its path). The bindings/go package itself does not import the
// supervisor; only programs that import this package link it.
package embedded
