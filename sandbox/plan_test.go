package sandbox

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlan: every mode gets all it promises or is refused with the
// reason; nothing is downgraded.
func TestPlan(t *testing.T) {
	full := Kernel{LandlockABI: 7, NetNS: true, UserNS: true, Seccomp: true}
	handles := full
	handles.NSHandles = true
	cases := []struct {
		name    string
		p       Policy
		k       Kernel
		h       Host
		via     string
		network string
		refused string
	}{
		{"read-only", Policy{Mode: ModeReadOnly}, full, Host{}, "landlock+landlock-scope", NetHost, ""},
		{"read-only ABI 5: no scopes", Policy{Mode: ModeReadOnly}, Kernel{LandlockABI: 5}, Host{}, "landlock", NetHost, ""},
		{"read-only ABI 4: no device ioctl rules", Policy{Mode: ModeReadOnly}, Kernel{LandlockABI: 4}, Host{}, "", "", "its Landlock ABI is 4"},
		{"read-only ABI 2", Policy{Mode: ModeReadOnly}, Kernel{LandlockABI: 2}, Host{}, "", "", "its Landlock ABI is 2"},
		{"workspace-write no Landlock", Policy{Mode: ModeWorkspaceWrite}, Kernel{LandlockWhy: "gone"}, Host{Root: true}, "", "", "Landlock is gone"},
		{"no-network root", Policy{Mode: ModeNone, NoNetwork: true}, full, Host{Root: true}, "landlock-domain+netns", NetLoopback, ""},
		{"no-network root, nsfs handles", Policy{Mode: ModeNone, NoNetwork: true}, handles, Host{Root: true}, "landlock-domain+seccomp-nsfs+netns", NetLoopback, ""},
		{"no-network root ABI 5: no scope-only domain", Policy{Mode: ModeNone, NoNetwork: true}, Kernel{LandlockABI: 5, NetNS: true, Seccomp: true}, Host{Root: true}, "", "", "--no-network for a root command needs Landlock ABI 6 or later (Linux 6.12) to keep it in its network namespace (a Landlock domain refuses it /proc/PID/ns/net of the processes outside), which this kernel does not offer: its Landlock ABI is 5; add --user USER, --pidns or --sandbox read-only"},
		{"no-network root without Landlock", Policy{Mode: ModeNone, NoNetwork: true}, Kernel{NetNS: true, LandlockWhy: "off"}, Host{Root: true}, "", "", "Landlock is off"},
		{"no-network root --user: no capabilities to leave with", Policy{Mode: ModeNone, NoNetwork: true}, Kernel{NetNS: true, NSHandles: true}, Host{Root: true, User: true}, "netns", NetLoopback, ""},
		{"no-network root, nsfs handles without seccomp", Policy{Mode: ModeNone, NoNetwork: true}, Kernel{LandlockABI: 7, NetNS: true, NSHandles: true, SeccompWhy: "no filter for riscv64"}, Host{Root: true}, "", "", "needs a seccomp filter refusing open_by_handle_at(2) (this kernel's nsfs file handles open the host's network namespace), which cannot be had here: no filter for riscv64; add --user USER"},
		{"no-network read-only root, nsfs handles", Policy{Mode: ModeReadOnly, NoNetwork: true}, handles, Host{Root: true}, "landlock+landlock-scope+seccomp-nsfs+netns", NetLoopback, ""},
		{"no-network read-only root", Policy{Mode: ModeReadOnly, NoNetwork: true}, full, Host{Root: true}, "landlock+landlock-scope+netns", NetLoopback, ""},
		{"no-network root no netns", Policy{Mode: ModeNone, NoNetwork: true}, Kernel{LandlockABI: 4, Seccomp: true}, Host{Root: true}, "landlock-tcp", NetNone, ""},
		{"no-network root no netns no seccomp", Policy{Mode: ModeNone, NoNetwork: true}, Kernel{LandlockABI: 4, SeccompWhy: "off"}, Host{Root: true}, "", "", "with a seccomp filter beside them, which cannot be had here: off"},
		{"no-network root no netns ABI 3", Policy{Mode: ModeNone, NoNetwork: true}, Kernel{LandlockABI: 3}, Host{Root: true}, "", "", "this kernel makes none"},
		{"no-network unprivileged", Policy{Mode: ModeNone, NoNetwork: true}, full, Host{}, "landlock-tcp+landlock-scope", NetNone, ""},
		{"no-network unprivileged no seccomp", Policy{Mode: ModeNone, NoNetwork: true}, Kernel{LandlockABI: 7, NetNS: true, UserNS: true, SeccompWhy: "no filter for riscv64"}, Host{}, "", "", "shellsup is not root; with --pidns it makes one in the init's user namespace) or Landlock ABI 4 or later for TCP rules with a seccomp filter beside them, which cannot be had here: no filter for riscv64"},
		{"no-network unprivileged pidns no seccomp", Policy{Mode: ModeNone, NoNetwork: true}, Kernel{LandlockABI: 7, NetNS: true, UserNS: true}, Host{PIDNS: true}, "netns", NetLoopback, ""},
		{"no-network unprivileged ABI 3", Policy{Mode: ModeNone, NoNetwork: true}, Kernel{LandlockABI: 3, NetNS: true, UserNS: true}, Host{}, "", "", "shellsup is not root"},
		{"no-network unprivileged pidns", Policy{Mode: ModeReadOnly, NoNetwork: true}, full, Host{PIDNS: true}, "landlock+landlock-scope+netns", NetLoopback, ""},
		{"no-network unprivileged pidns no userns", Policy{Mode: ModeNone, NoNetwork: true}, Kernel{NetNS: true, UserNSWhy: "off"}, Host{PIDNS: true}, "", "", "--pidns cannot make the user namespace: off"},
		{"no-network unprivileged pidns no userns falls to TCP rules", Policy{Mode: ModeNone, NoNetwork: true}, Kernel{LandlockABI: 4, NetNS: true, Seccomp: true}, Host{PIDNS: true}, "landlock-tcp", NetNone, ""},
		{"no-network root pidns", Policy{Mode: ModeNone, NoNetwork: true}, Kernel{NetNS: true}, Host{Root: true, PIDNS: true}, "netns", NetLoopback, ""},
		{"no-network root pidns, nsfs handles", Policy{Mode: ModeNone, NoNetwork: true}, handles, Host{Root: true, PIDNS: true}, "seccomp-nsfs+netns", NetLoopback, ""},
		{"no-network unprivileged pidns, nsfs handles: a user namespace of its own", Policy{Mode: ModeNone, NoNetwork: true}, handles, Host{PIDNS: true}, "netns", NetLoopback, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.p
			err := Plan(&p, c.k, c.h)
			if c.refused != "" {
				var ue *UnavailableError
				require.True(t, errors.As(err, &ue), "%v", err)
				assert.Contains(t, err.Error(), c.refused)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.via, p.Via())
			assert.Equal(t, c.network, p.Network())
		})
	}
}

// TestWire: the init reads back what shellsup planned.
func TestWire(t *testing.T) {
	p := &Policy{Mode: ModeWorkspaceWrite, Workspace: "/w", Protect: []string{"/w/.git"}, NoNetwork: true, TmpDir: "/tmp/x", NetNS: true}
	q, err := FromWire(p.Wire())
	require.NoError(t, err)
	assert.Equal(t, p, q)
	_, err = FromWire(`{"mode":"full"}`)
	assert.Error(t, err)
}
