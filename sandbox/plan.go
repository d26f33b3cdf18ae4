package sandbox

import "fmt"

// Landlock ABI versions the modes need.
const (
	// MinABIFS: ABI 5 (Linux 6.10) handles ioctl(2) on devices; before
	// it a root command could open another terminal read-only and type
	// into it (TIOCSTI). ABI 3 (6.2) handles truncate(2), ABI 2 (5.19)
	// rename and link across directories.
	MinABIFS = 5
	// MinABITCP: ABI 4 (Linux 6.7) has TCP bind and connect rules.
	MinABITCP = 4
	// MinABIScope: ABI 6 (Linux 6.12) scopes signals and abstract Unix
	// sockets to the sandbox; added where the kernel has it, and reported.
	// It is also the first ABI that makes a ruleset of a scope alone: the
	// Landlock domain that keeps a root command in its network namespace
	// without --sandbox (planHold).
	MinABIScope = 6
)

// Kernel is what the kernel offers the sandbox.
type Kernel struct {
	LandlockABI int    // 0: no Landlock (not built, or not in the lsm= list)
	LandlockWhy string // why LandlockABI is 0, when it is
	NetNS       bool   // network namespaces can be made (by root directly)
	UserNS      bool   // unprivileged user namespaces can be made (for --pidns)
	UserNSWhy   string // why UserNS is false, when it is
	// Seccomp: the seccomp filter the Landlock TCP rules need beside them
	// (seccomp_linux.go) can be installed: this architecture has one, and
	// the kernel has seccomp.
	Seccomp    bool
	SeccompWhy string // why Seccomp is false, when it is
	// NSHandles: nsfs has file handles (Linux 6.18): open_by_handle_at
	// opens any namespace its caller has CAP_SYS_ADMIN over, the host's
	// network namespace among them for a root command, with no ptrace
	// check, so Landlock does not see it.
	NSHandles bool
}

// Host is how shellsup runs: root (CAP_SYS_ADMIN, a network namespace
// without a user namespace) or not, and with --pidns (whose init is in a
// user namespace of its own when shellsup is not root).
type Host struct {
	Root  bool
	PIDNS bool
	User  bool // --user: the command runs as that user, without capabilities
}

// UnavailableError: the policy cannot be enforced in full here; nothing
// of the command may run.
type UnavailableError struct{ Reason string }

func (e *UnavailableError) Error() string { return e.Reason }

// Plan decides how p is enforced with what k offers, setting p.NetNS or
// p.LandlockTCP (and p.Scoped where Landlock has scopes), or refuses with
// an *UnavailableError naming the reason. Nothing is downgraded: a mode
// gets every rule it promises or is refused; the scopes, which no mode
// promises, are reported in Via when they are in force.
func Plan(p *Policy, k Kernel, h Host) error {
	if p.FS() && k.LandlockABI < MinABIFS {
		return &UnavailableError{Reason: fmt.Sprintf("--sandbox %s needs Landlock ABI %d or later (Linux 6.10), which %s",
			p.Mode, MinABIFS, landlockState(k))}
	}
	err := planNetwork(p, k, h)
	p.Scoped = err == nil && (p.FS() || p.LandlockTCP) && k.LandlockABI >= MinABIScope
	if err == nil {
		err = planHold(p, k, h)
	}
	return err
}

// planHold keeps a root command (root without --user: CAP_SYS_ADMIN and
// CAP_SYS_PTRACE over the host's namespaces) in the network namespace
// --no-network gives it (fifth review, finding 5). setns(2) into another
// process's network namespace takes a descriptor of it, which such a
// command could get two ways:
//
//   - /proc/PID/ns/net or a pidfd (setns on it, PIDFD_GET_NET_NAMESPACE)
//     of any host process, shellsup ($PPID) first: each is a ptrace access
//     check, which a Landlock domain refuses towards every process outside
//     it. --sandbox has a domain already; --pidns leaves no host process
//     to name. Otherwise p.Domain: a ruleset of the abstract Unix socket
//     scope alone (ABI 6), which takes nothing else away.
//   - open_by_handle_at(2) of a forged nsfs handle (Linux 6.18; the host
//     namespace's inode number is a constant and its id small): p.NoHandles,
//     a seccomp filter refusing it and io_uring, whatever the tier.
//
// Without them the run is refused, never run with a way out.
func planHold(p *Policy, k Kernel, h Host) error {
	p.Domain, p.NoHandles, p.NoNetAdmin = false, false, false
	if !p.NetNS || !h.Root || h.User {
		return nil
	}
	p.NoNetAdmin = !h.PIDNS // in a PID namespace no host process has a pid to name
	if !p.FS() && !h.PIDNS {
		if k.LandlockABI < MinABIScope {
			return &UnavailableError{Reason: fmt.Sprintf("--no-network for a root command needs Landlock ABI %d or later (Linux 6.12) to keep it in its network namespace (a Landlock domain refuses it /proc/PID/ns/net of the processes outside), which %s; add --user USER, --pidns or --sandbox read-only",
				MinABIScope, landlockState(k))}
		}
		p.Domain = true
	}
	if k.NSHandles {
		if !k.Seccomp {
			return &UnavailableError{Reason: "--no-network for a root command needs a seccomp filter refusing open_by_handle_at(2) (this kernel's nsfs file handles open the host's network namespace), which " + seccompState(k) + "; add --user USER"}
		}
		p.NoHandles = true
	}
	return nil
}

// planNetwork decides how --no-network is enforced.
func planNetwork(p *Policy, k Kernel, h Host) error {
	if !p.NoNetwork {
		return nil
	}
	p.NetNS, p.LandlockTCP = false, false
	switch {
	case h.PIDNS && (h.Root || k.UserNS) && k.NetNS:
		p.NetNS = true // the init's namespaces get a network namespace too
	case !h.PIDNS && h.Root && k.NetNS:
		p.NetNS = true
	case k.LandlockABI >= MinABITCP && k.Seccomp:
		p.LandlockTCP = true
	default:
		return &UnavailableError{Reason: fmt.Sprintf("--no-network needs a network namespace (%s) or Landlock ABI %d or later for TCP rules with a seccomp filter beside them, which %s",
			netnsState(k, h), MinABITCP, tcpRulesState(k))}
	}
	return nil
}

// tcpRulesState says why the Landlock TCP rules cannot be had.
func tcpRulesState(k Kernel) string {
	if k.LandlockABI >= MinABITCP && !k.Seccomp {
		return seccompState(k)
	}
	return landlockState(k)
}

// seccompState says why shellsup's seccomp filters cannot be had.
func seccompState(k Kernel) string {
	why := k.SeccompWhy
	if why == "" {
		why = "seccomp is not available"
	}
	return "cannot be had here: " + why
}

func landlockState(k Kernel) string {
	if k.LandlockABI == 0 {
		why := k.LandlockWhy
		if why == "" {
			why = "not available"
		}
		return "this kernel does not offer: Landlock is " + why
	}
	return fmt.Sprintf("this kernel does not offer: its Landlock ABI is %d", k.LandlockABI)
}

func netnsState(k Kernel, h Host) string {
	switch {
	case !k.NetNS:
		return "this kernel makes none"
	case h.Root:
		return "unavailable"
	case !h.PIDNS:
		return "shellsup is not root; with --pidns it makes one in the init's user namespace"
	}
	why := k.UserNSWhy
	if why == "" {
		why = "unprivileged user namespaces are not available"
	}
	return "--pidns cannot make the user namespace: " + why
}
