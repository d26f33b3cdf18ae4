package supervisor

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/ports"
	"github.com/shellsup/shellsup/protocol"
)

// TestPortsAnswerStaysUnderTheCap: the largest answer shellsup can send
// (protocol.MaxPorts entries, each as long as an entry gets) encodes to
// well under half the frame cap; the rest are counted in omitted.
func TestPortsAnswerStaysUnderTheCap(t *testing.T) {
	list := make([]ports.Port, 0, 3*protocol.MaxPorts)
	for i := 0; i < 3*protocol.MaxPorts; i++ {
		list = append(list, ports.Port{Proto: "tcp6", Addr: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Port: 65535 - i%3, Pid: 4194304})
	}
	f := portsAnswer(&protocol.Ports{}, list)
	assert.Len(t, f.Ports, protocol.MaxPorts)
	assert.Equal(t, 2*protocol.MaxPorts, f.Omitted)
	wire, err := protocol.NewEncoder(nil).Marshal(f)
	require.NoError(t, err)
	assert.Less(t, len(wire), protocol.MaxFrameSize/2)
	assert.LessOrEqual(t, len(wire), 4+32+protocol.MaxPorts*75, "an entry encodes to at most 75 bytes")
}

// TestPortsAnswerNamesOnlyTheAskedPorts: a query naming a port gets the
// listeners on it even when more than MaxPorts lower ones exist.
func TestPortsAnswerNamesOnlyTheAskedPorts(t *testing.T) {
	var list []ports.Port
	for p := 1; p <= protocol.MaxPorts+10; p++ {
		list = append(list, ports.Port{Proto: "tcp", Addr: "0.0.0.0", Port: p, Pid: 7})
	}
	list = append(list, ports.Port{Proto: "tcp6", Addr: "::", Port: 60000, Pid: 8})
	all := portsAnswer(&protocol.Ports{}, slices.Clone(list))
	assert.Len(t, all.Ports, protocol.MaxPorts)
	assert.Equal(t, 11, all.Omitted)
	one := portsAnswer(&protocol.Ports{Ports: []protocol.Port{{Port: 60000}}}, slices.Clone(list))
	assert.Equal(t, &protocol.Ports{Ports: []protocol.Port{{Proto: "tcp6", Addr: "::", Port: 60000, Pid: 8}}}, one)
}
