package reaper

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/linux"
)

// Containment is the set of tiers guarding one run. Create it with Setup
// before the command is spawned.
type Containment struct {
	procRoot string
	self     int
	tiers    []Tier
	nofile   unix.Rlimit // RLIMIT_NOFILE at Setup, restored at Cleanup
	disabled bool        // test-only negative control: Cleanup does nothing
}

// Setup makes shellsup a child subreaper and checks that procRoot (always
// "/proc" outside tests) is a mounted procfs that can enumerate processes,
// and that pidfds work. Any failure is an *UnavailableError: shellsup
// refuses to run rather than run with weaker containment. It also starts
// the OS threads the process will need (see reserveThreads) and opens the
// children file the cleanup re-reads when it can open nothing (see
// heldChildren), as the fd reserve was taken at init: what a command could
// deny shellsup later by lowering its rlimits is held before the command
// exists.
func Setup(procRoot string) (*Containment, error) {
	reserveThreads()
	if err := becomeSubreaper(); err != nil {
		return nil, err
	}
	if err := checkProcfs(procRoot); err != nil {
		return nil, err
	}
	if err := probePidfd(); err != nil {
		return nil, err
	}
	heldChildren()
	c := &Containment{procRoot: procRoot, self: os.Getpid(), tiers: []Tier{subreaperTier{}}}
	if err := linux.Getrlimit(unix.RLIMIT_NOFILE, &c.nofile); err != nil {
		return nil, &UnavailableError{What: "reading RLIMIT_NOFILE", Err: err}
	}
	return c, nil
}

// Disabled returns a Containment that neither sets the subreaper bit nor
// kills anything: the test-only seam behind the leak checker's negative
// control. Production builds never call it.
func Disabled() *Containment {
	return &Containment{procRoot: "/proc", self: os.Getpid(), disabled: true}
}

// Name lists the tiers in use, outermost first, e.g. "subreaper".
func (c *Containment) Name() string {
	if c.disabled {
		return "none"
	}
	names := make([]string, len(c.tiers))
	for i, t := range c.tiers {
		names[len(c.tiers)-1-i] = t.Name()
	}
	return strings.Join(names, "+")
}

// AddTier adds a tier on top of those set up so far (the subreaper floor
// comes first): Name lists it first, e.g. "cgroup+subreaper", and Cleanup
// runs its hooks before the /proc walk and closes it once the tree is gone.
func (c *Containment) AddTier(t Tier) {
	if !c.disabled {
		c.tiers = append(c.tiers, t)
	}
}
