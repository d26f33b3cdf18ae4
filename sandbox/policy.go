package sandbox

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/shellsup/shellsup/request"
)

// Modes of --sandbox.
const (
	ModeNone           = "none"            // as without a sandbox (the default)
	ModeReadOnly       = "read-only"       // write nowhere but the private TMPDIR
	ModeWorkspaceWrite = "workspace-write" // read-only plus the workspace
)

// Networks as the report names them.
const (
	NetHost     = "host"     // the host's network, as without --no-network
	NetLoopback = "loopback" // a network namespace of its own with only lo up
	NetNone     = "none"     // no TCP at all (Landlock), the host's namespace
)

// Mechanisms, joined by "+" in the report's via.
const (
	ViaLandlock    = "landlock"     // the filesystem rules
	ViaNetns       = "netns"        // a network namespace
	ViaLandlockTCP = "landlock-tcp" // Landlock TCP rules: no connect, no bind
	// ViaScope: Landlock scopes (ABI 6): no signal to, and no abstract
	// Unix socket of, a process outside the sandbox.
	ViaScope = "landlock-scope"
	// ViaDomain: a Landlock domain with no rules but the abstract Unix
	// socket scope (ABI 6), for a root command under --no-network without
	// --sandbox: processes outside refuse it ptrace access, their
	// /proc/PID/ns among it (planHold).
	ViaDomain = "landlock-domain"
	// ViaNoHandles: a seccomp filter refusing open_by_handle_at(2) (nsfs
	// file handles, Linux 6.18) and io_uring, for a root command under
	// --no-network (planHold).
	ViaNoHandles = "seccomp-nsfs"
)

// Modes lists the modes --sandbox accepts.
var Modes = request.SandboxModes

// Devices a sandboxed command may still open for writing.
// Not /dev/tty: it names the caller's controlling terminal, and a
// sandboxed process can make any terminal it opens that (bash leads a
// session; any process may setsid), so a write or an ioctl through
// /dev/tty could reach another terminal. The terminal bash inherits (a
// PTY job's) keeps working through its descriptors.
var Devices = []string{"/dev/null", "/dev/zero", "/dev/full"}

// Policy is what a run asks of the sandbox, and, once planned, how it is
// enforced.
type Policy struct {
	Mode      string   `json:"mode"`
	Workspace string   `json:"workspace,omitempty"` // resolved; workspace-write only
	Protect   []string `json:"protect,omitempty"`   // resolved directories in the workspace, kept read-only
	// Pins: the workspace and each directory on the way to a protected
	// one, by path, as configuration found them (Pin); the rules are made
	// on these or the run is refused.
	Pins      map[string]FileID `json:"pins,omitempty"`
	NoNetwork bool              `json:"noNetwork,omitempty"`
	TmpDir    string            `json:"tmpDir,omitempty"` // the private TMPDIR, once made

	// Set by Plan.
	NetNS       bool `json:"netns,omitempty"`       // the network is cut by a namespace
	LandlockTCP bool `json:"landlockTCP,omitempty"` // the network is cut by Landlock TCP rules
	Scoped      bool `json:"scoped,omitempty"`      // Landlock scopes signals and abstract Unix sockets
	// Domain and NoHandles keep a root command in its network namespace
	// (planHold): a Landlock domain of the abstract Unix socket scope
	// alone, and a seccomp filter refusing open_by_handle_at and io_uring.
	Domain    bool `json:"domain,omitempty"`
	NoHandles bool `json:"noHandles,omitempty"`
	// NoNetAdmin drops CAP_NET_ADMIN from a root command's bounding set
	// (planHold, outside --pidns): rtnetlink names a namespace by pid with
	// no ptrace check (ip link add … netns $PPID), so a veth end made in
	// the host's namespace would reach its listeners.
	NoNetAdmin bool `json:"noNetAdmin,omitempty"`

	// granted: the workspace's places the rules were made on (Grants),
	// once they were made in this process, or found for the report.
	granted []string
}

// ValidMode reports whether s is a mode --sandbox accepts.
func ValidMode(s string) bool { return slices.Contains(Modes, s) }

// FS: the policy restricts the filesystem.
func (p *Policy) FS() bool {
	return p != nil && (p.Mode == ModeReadOnly || p.Mode == ModeWorkspaceWrite)
}

// Active: the policy restricts anything at all.
func (p *Policy) Active() bool { return p != nil && (p.FS() || p.NoNetwork) }

// Network is the network the command sees, as the report names it.
func (p *Policy) Network() string {
	switch {
	case p == nil || !p.NoNetwork:
		return NetHost
	case p.NetNS:
		return NetLoopback
	}
	return NetNone
}

// Via names the mechanisms in force, joined by "+".
func (p *Policy) Via() string {
	var via []string
	if p.FS() {
		via = append(via, ViaLandlock)
	}
	if p.LandlockTCP {
		via = append(via, ViaLandlockTCP)
	}
	if p.Scoped {
		via = append(via, ViaScope)
	}
	if p.Domain {
		via = append(via, ViaDomain)
	}
	if p.NoHandles {
		via = append(via, ViaNoHandles)
	}
	if p.NetNS {
		via = append(via, ViaNetns)
	}
	return strings.Join(via, "+")
}

// Writable lists where the command may write (directories and the
// devices), in the order the rules are made; nil without filesystem rules.
// The workspace's places are those the rules were made on when Restrict
// ran in this process; under --pidns (the init makes the rules) those a
// walk by descriptors finds on the first call, checked against the same
// pins, and kept for the later calls.
func (p *Policy) Writable() []string {
	if !p.FS() {
		return nil
	}
	var w []string
	if p.Mode == ModeWorkspaceWrite {
		if p.granted == nil {
			p.granted = p.grantedNow() // refused: the init refuses the run too
		}
		w = append(w, p.granted...)
	}
	if p.TmpDir != "" {
		w = append(w, p.TmpDir)
	}
	return append(w, Devices...)
}

// Wire is the policy as one argument, for the PID-namespace init.
func (p *Policy) Wire() string {
	b, err := json.Marshal(p)
	if err != nil {
		panic(fmt.Sprintf("sandbox policy does not marshal: %v", err)) // strings and bools only
	}
	return string(b)
}

// FromWire reads what Wire wrote.
func FromWire(s string) (*Policy, error) {
	var p Policy
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return nil, fmt.Errorf("reading the sandbox policy: %w", err)
	}
	if !ValidMode(p.Mode) {
		return nil, fmt.Errorf("reading the sandbox policy: mode %q", p.Mode)
	}
	return &p, nil
}
