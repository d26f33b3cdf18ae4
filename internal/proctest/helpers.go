package proctest

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Lifetime bounds every helper program: it exits with status 3 after this
// long, whatever it is doing.
const Lifetime = 60 * time.Second

// Helpers is a registry of helper programs. The test binary, started with
// the registry's environment variable set to a name, runs that helper
// instead of the tests.
type Helpers struct {
	envVar string
	mains  map[string]func(args []string) int
	used   sync.Map // name → true once started
}

// NewHelpers returns an empty registry whose helpers are selected by the
// environment variable envVar.
func NewHelpers(envVar string) *Helpers {
	return &Helpers{envVar: envVar, mains: map[string]func([]string) int{}}
}

// Register adds the helper name, whose main gets the arguments after the
// program name and returns the exit status. Register panics on a name
// registered twice; call it from init or package variables.
func (h *Helpers) Register(name string, main func(args []string) int) {
	if _, dup := h.mains[name]; dup {
		panic("proctest: helper " + strconv.Quote(name) + " registered twice")
	}
	h.mains[name] = main
}

// Env is the environment entry that makes the test binary helper name.
// Asking for it marks the helper used.
func (h *Helpers) Env(name string) string {
	if _, ok := h.mains[name]; !ok {
		panic("proctest: no helper " + strconv.Quote(name))
	}
	h.used.Store(name, true)
	return h.envVar + "=" + name
}

// Command returns an exec.Cmd that runs helper name with args, with the
// test's environment plus the helper's entry.
func (h *Helpers) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...) // Main runs the helper before any test flag is read
	cmd.Env = append(os.Environ(), h.Env(name))
	return cmd
}

// Shell returns the shell text that runs helper name with args, for a
// command run by bash (inside shellsup).
func (h *Helpers) Shell(name string, args ...string) string {
	exe, err := os.Executable()
	if err != nil {
		panic(fmt.Sprintf("proctest: finding the test binary: %v", err))
	}
	q := []string{h.Env(name), strconv.Quote(exe)}
	for _, a := range args {
		q = append(q, strconv.Quote(a))
	}
	return strings.Join(q, " ")
}

// unused lists the registered helpers nobody started, sorted.
func (h *Helpers) unused() []string {
	var out []string
	for name := range h.mains {
		if _, ok := h.used.Load(name); !ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// runIfAsked runs the helper the environment names, if any, and exits
// with its status; otherwise it returns.
func (h *Helpers) runIfAsked() {
	if h == nil {
		return
	}
	name := os.Getenv(h.envVar)
	if name == "" {
		return
	}
	time.AfterFunc(Lifetime, func() {
		fmt.Fprintf(os.Stderr, "helper %s: self-destruct after %v\n", name, Lifetime)
		os.Exit(3)
	})
	main, ok := h.mains[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown helper %q\n", name)
		os.Exit(2)
	}
	os.Exit(main(os.Args[1:]))
}
