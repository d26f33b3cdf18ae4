package ports

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// Listening returns the listening ports of pids that are reachable from
// shellsup: sockets in the network namespace of procRoot/self (shellsup's
// own), read from procRoot (always "/proc" outside tests). Each
// proto/addr/port is listed once, sorted by port then protocol and address.
// Processes that exit meanwhile are skipped.
//
// Only shellsup's own namespace's tables are read: a socket that a process
// of the set created in another network namespace (unshare -n) is not in
// them, so it is never reported, even when it has the port of a stranger
// listening in ours. A socket the set holds that was created in ours (and
// inherited across an unshare) is, as it is reachable here.
func Listening(procRoot string, pids []int) ([]Port, error) {
	owner := map[uint64]int{} // socket inode → pid
	for _, pid := range pids {
		socketsOf(procRoot, pid, owner)
	}
	var out []Port
	if len(owner) == 0 {
		return out, nil
	}
	for _, proto := range []string{"tcp", "tcp6", "udp", "udp6"} {
		ps, err := table(fmt.Sprintf("%s/self/net/%s", procRoot, proto), proto, owner)
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		out = append(out, ps...)
	}
	return dedupe(out), nil
}

// socketsOf records the socket inodes behind pid's fds.
func socketsOf(procRoot string, pid int, owner map[uint64]int) {
	dir := fmt.Sprintf("%s/%d/fd", procRoot, pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return // exited, or not ours to read
	}
	for _, e := range ents {
		link, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue
		}
		if s, ok := strings.CutPrefix(link, "socket:["); ok {
			if ino, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
				if cur, seen := owner[ino]; !seen || pid < cur {
					owner[ino] = pid // the lowest pid, whatever order the set came in
				}
			}
		}
	}
}

// table reads one /proc/net table and keeps the listening sockets owned by
// the set.
func table(path, proto string, owner map[uint64]int) ([]Port, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() // read-only
	var out []Port
	sc := bufio.NewScanner(f)
	sc.Scan() // the header line
	for sc.Scan() {
		p, ok := parseLine(sc.Text(), proto)
		if !ok {
			continue
		}
		if pid, mine := owner[p.inode]; mine {
			p.Port.Pid = pid
			out = append(out, p.Port)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return out, nil
}

type entry struct {
	Port
	inode uint64
}

// TCP_LISTEN in /proc/net/tcp's st column; UDP sockets show 07 (CLOSE) when
// merely bound.
const (
	stateListen = "0A"
	stateClose  = "07"
)

// parseLine reads "sl local_address rem_address st ... inode".
func parseLine(line, proto string) (entry, bool) {
	f := strings.Fields(line)
	if len(f) < 10 {
		return entry{}, false
	}
	st := f[3]
	if strings.HasPrefix(proto, "tcp") && st != stateListen || strings.HasPrefix(proto, "udp") && st != stateClose {
		return entry{}, false
	}
	hexAddr, hexPort, ok := strings.Cut(f[1], ":")
	if !ok {
		return entry{}, false
	}
	port, err1 := strconv.ParseUint(hexPort, 16, 16)
	inode, err2 := strconv.ParseUint(f[9], 10, 64)
	addr, err3 := parseAddr(hexAddr)
	if err1 != nil || err2 != nil || err3 != nil || inode == 0 {
		return entry{}, false
	}
	return entry{Port{Proto: proto, Addr: addr, Port: int(port)}, inode}, true
}

// parseAddr decodes the kernel's hex address: 32-bit words in host (little
// endian on the machines this runs on) byte order.
func parseAddr(h string) (string, error) {
	if len(h) != 8 && len(h) != 32 {
		return "", fmt.Errorf("address %q has %d hex digits", h, len(h))
	}
	b := make([]byte, len(h)/2)
	for i := 0; i < len(h)/8; i++ {
		w, err := strconv.ParseUint(h[i*8:i*8+8], 16, 32)
		if err != nil {
			return "", err
		}
		b[i*4], b[i*4+1], b[i*4+2], b[i*4+3] = byte(w), byte(w>>8), byte(w>>16), byte(w>>24)
	}
	if len(b) == 4 {
		return fmt.Sprintf("%d.%d.%d.%d", b[0], b[1], b[2], b[3]), nil
	}
	return ipv6(b), nil
}

func ipv6(b []byte) string {
	return netip.AddrFrom16([16]byte(b)).Unmap().String()
}
