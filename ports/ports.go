package ports

import (
	"slices"
	"strings"
)

// Port is one listening socket.
type Port struct {
	Proto string `msgpack:"proto"` // "tcp", "tcp6", "udp", "udp6"
	Addr  string `msgpack:"addr"`  // the local address, e.g. "127.0.0.1" or "::"
	Port  int    `msgpack:"port"`
	Pid   int    `msgpack:"pid"` // a process of the set holding the socket
}

// Proc is one process of the set, by identity: its pid and its start time
// (clock ticks since boot, field 22 of /proc/PID/stat). A pid whose process
// now has another start time names a stranger that took a dead member's
// pid, and its sockets are not the set's.
type Proc struct {
	Pid   int
	Start uint64
}

// dedupe sorts ps by port, protocol and address and keeps one entry (the
// lowest pid's) per port, protocol and address: SO_REUSEPORT sockets, or
// one per process of a pre-forked server, are one listener to a client.
func dedupe(ps []Port) []Port {
	slices.SortFunc(ps, func(a, b Port) int {
		if c := comparePort(a, b); c != 0 {
			return c
		}
		return a.Pid - b.Pid
	})
	return slices.CompactFunc(ps, func(a, b Port) bool { return comparePort(a, b) == 0 })
}

func comparePort(a, b Port) int {
	if a.Port != b.Port {
		return a.Port - b.Port
	}
	if c := strings.Compare(a.Proto, b.Proto); c != 0 {
		return c
	}
	return strings.Compare(a.Addr, b.Addr)
}

// Cut keeps the first max entries of ps (sorted by Listening, so the
// lowest ports) and says how many it left out.
func Cut(ps []Port, max int) ([]Port, int) {
	if len(ps) <= max {
		return ps, 0
	}
	return ps[:max], len(ps) - max
}

// Only keeps the entries of ps on one of the given port numbers (any
// protocol and address); with no numbers it keeps all.
func Only(ps []Port, numbers []int) []Port {
	if len(numbers) == 0 {
		return ps
	}
	wanted := make(map[int]bool, len(numbers))
	for _, n := range numbers {
		wanted[n] = true
	}
	return slices.DeleteFunc(ps, func(p Port) bool { return !wanted[p.Port] })
}
