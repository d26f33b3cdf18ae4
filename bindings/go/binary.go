package shellsup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/shellsup/shellsup/internal/embedmode"
)

// BinaryEnv names the environment variable that points Run at the shellsup
// executable when Request.Binary is empty.
const BinaryEnv = "SHELLSUP_BIN"

// executable is os.Executable; a variable so that tests can place the
// calling program elsewhere.
var executable = os.Executable

// findBinary returns the shellsup executable to run, from the first of
// these places that is set or holds one:
//
//  1. Request.Binary, as given;
//  2. $SHELLSUP_BIN, in the calling process's environment;
//  3. the embedded supervisor: the calling program itself, if it called
//     embedded.Init (package bindings/go/embedded);
//  4. "shellsup" in the directory of the calling program (os.Executable),
//     as a release archive or a `go build -o` next to it leaves it;
//  5. "shellsup" in $PATH (`go install ./cmd/shellsup` puts it there),
//     absolute directories only: an empty or relative element names the
//     current directory, where a planted shellsup would run unsupervised
//     (exec.LookPath refuses those too, unless GODEBUG=execerrdot=0).
//
// A place that is set but does not hold an executable (1–3) is an error:
// Run never falls back to a binary the caller did not name. The not_found
// error lists every place looked at.
func findBinary(explicit string) (string, error) {
	if explicit != "" {
		return lookPath(explicit, fmt.Sprintf("Request.Binary %q", explicit))
	}
	looked := []string{"Request.Binary (empty)"}
	if env := os.Getenv(BinaryEnv); env != "" {
		return lookPath(env, fmt.Sprintf("Request.Binary (empty); $%s %q", BinaryEnv, env))
	}
	looked = append(looked, "$"+BinaryEnv+" (not set)")
	if exe, ok, err := embedmode.Registered(); ok {
		if err != nil {
			return "", notFound(append(looked, fmt.Sprintf("the embedded supervisor (embedded.Init was called, but the program's own path is unknown: %v)", err)), err)
		}
		return exe, nil
	}
	looked = append(looked, "the embedded supervisor (embedded.Init not called)")
	if bin, ok := nextToExecutable(&looked); ok {
		return bin, nil
	}
	bin, err := onPath(&looked)
	if err == nil {
		return bin, nil
	}
	return "", notFound(append(looked, fmt.Sprintf("\"shellsup\" in $PATH (%s): not found", os.Getenv("PATH"))), err)
}

// onPath finds "shellsup" in the absolute directories of $PATH, recording
// in looked each element it skipped.
func onPath(looked *[]string) (string, error) {
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if !filepath.IsAbs(dir) {
			*looked = append(*looked, fmt.Sprintf("%q in $PATH (skipped: not an absolute directory)", dir))
			continue
		}
		if bin, err := exec.LookPath(filepath.Join(dir, "shellsup")); err == nil {
			return bin, nil
		}
	}
	return "", exec.ErrNotFound
}

// nextToExecutable looks for shellsup in the calling program's directory,
// recording what it saw in looked.
func nextToExecutable(looked *[]string) (string, bool) {
	exe, err := executable()
	if err != nil {
		*looked = append(*looked, fmt.Sprintf("next to the program (its path is unknown: %v)", err))
		return "", false
	}
	candidate := filepath.Join(filepath.Dir(exe), "shellsup")
	if candidate == exe {
		// The program is itself named shellsup: it is not the binary to run.
		*looked = append(*looked, fmt.Sprintf("%s (next to the program: it is the program itself)", candidate))
		return "", false
	}
	bin, err := exec.LookPath(candidate)
	if err != nil {
		*looked = append(*looked, fmt.Sprintf("%s (next to the program: %s)", candidate, why(err)))
		return "", false
	}
	return bin, true
}

// why says briefly why path lookup failed.
func why(err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "does not exist"
	case errors.Is(err, os.ErrPermission):
		return "not executable"
	}
	return err.Error()
}

// supervisorEnv is the environment of the shellsup process for bin: env
// (nil meaning the caller's own), plus, when bin is the re-executed calling
// program, the embedded-mode marker and the binary's runtime settings
// (see embedmode.SupervisorEnv).
func supervisorEnv(bin string, env []string) []string {
	exe, ok, err := embedmode.Registered()
	if !ok || err != nil || bin != exe {
		return env
	}
	if env == nil {
		env = os.Environ()
	}
	return embedmode.SupervisorEnv(slices.Clone(env))
}

// pins holds, for the life of the calling process, what Run and Start
// resolved and the pinned copy of each binary they run: see resolveBinary.
var pins struct {
	sync.Mutex
	resolved map[string]string   // lookup inputs → the binary they found
	files    map[string]*os.File // that binary → its sealed copy
}

// resolveBinary is findBinary done once per calling process for each set
// of inputs (Request.Binary, $SHELLSUP_BIN, $PATH, the embedded
// registration): the first Run resolves the binary and pins it (pinFile),
// and every later Run with the same inputs executes the pinned copy
// without looking again, so a command that replaces the file or plants a
// shellsup earlier on $PATH cannot reach a later run. A failed lookup is
// not remembered.
func resolveBinary(explicit string) (string, error) {
	exe, ok, _ := embedmode.Registered()
	key := strings.Join([]string{explicit, os.Getenv(BinaryEnv), os.Getenv("PATH"), exe, fmt.Sprint(ok)}, "\x00")
	pins.Lock()
	defer pins.Unlock()
	if bin, found := pins.resolved[key]; found {
		return bin, nil
	}
	bin, err := findBinary(explicit)
	if err != nil {
		return "", err
	}
	if _, pinned := pins.files[bin]; !pinned && !isEmbedded(bin) {
		f, err := pinFile(bin)
		if err != nil {
			return "", newError(CategoryExecFailed, fmt.Sprintf("pinning the shellsup binary %s: %v", bin, err), err)
		}
		if pins.files == nil {
			pins.files, pins.resolved = map[string]*os.File{}, map[string]string{}
		}
		pins.files[bin] = f
	}
	if pins.resolved == nil {
		pins.resolved = map[string]string{}
	}
	pins.resolved[key] = bin
	return bin, nil
}

// isEmbedded reports whether bin is the calling program re-executed as
// its own supervisor.
func isEmbedded(bin string) bool {
	exe, ok, err := embedmode.Registered()
	return ok && err == nil && bin == exe
}

// supervisorCommand is the command that runs the shellsup binary bin with
// args. It executes the image resolveBinary pinned, not the path: the
// sealed copy, passed as fd 3 and executed as /proc/self/fd/3 (argv[0]
// stays bin; shellsup marks fd 3 close-on-exec, so bash never has it), or,
// in embedded mode, /proc/self/exe, the running program's own inode. A bin
// that was never resolved (tests) runs by path.
func supervisorCommand(ctx context.Context, bin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	pins.Lock()
	f := pins.files[bin]
	pins.Unlock()
	switch {
	case isEmbedded(bin):
		cmd.Path = "/proc/self/exe"
	case f != nil:
		cmd.Path, cmd.ExtraFiles = "/proc/self/fd/3", []*os.File{f}
	}
	return cmd
}

// lookPath checks that path is an executable file (or finds a bare name in
// $PATH), as exec.Command would.
func lookPath(path, looked string) (string, error) {
	bin, err := exec.LookPath(path)
	if err != nil {
		return "", newError(CategoryNotFound, fmt.Sprintf("no shellsup binary: looked at %s: %v", looked, err), err)
	}
	return bin, nil
}

// notFound is the not_found error listing every place looked at.
func notFound(looked []string, err error) error {
	return newError(CategoryNotFound, "no shellsup binary: looked at "+strings.Join(looked, "; ")+
		"; install one (`go install ./cmd/shellsup` in a shellsup checkout), set $"+BinaryEnv+
		", or call embedded.Init", err)
}
