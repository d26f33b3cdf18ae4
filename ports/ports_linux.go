package ports

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/shellsup/shellsup/internal/procstat"
)

// Listening returns the listening ports of pids that are reachable from
// shellsup: sockets in the network namespace of procRoot/self (shellsup's
// own), read from procRoot (always "/proc" outside tests). Each
// proto/addr/port is listed once, sorted by port then protocol and address.
// Processes that exit meanwhile are skipped, and so is a pid that names a
// process with another start time than the one given (a stranger that took
// the pid of a member that died): a process's sockets count only if its
// start time, read after its fds, is the one given.
//
// Only shellsup's own namespace's tables are read: a socket that a process
// of the set created in another network namespace (unshare -n) is not in
// them, so it is never reported, even when it has the port of a stranger
// listening in ours. A socket the set holds that was created in ours (and
// inherited across an unshare) is, as it is reachable here.
func Listening(procRoot string, procs []Proc) ([]Port, error) {
	owner := map[uint64]int{} // socket inode → pid
	for _, p := range procs {
		socketsOf(procRoot, p, owner)
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

// socketsOf records the socket inodes behind p's fds, if p still is the
// process given: its start time is read after the fds (a pid keeps naming
// one process from its start to its reap, so the same start time then
// means the fds read were that process's).
func socketsOf(procRoot string, p Proc, owner map[uint64]int) {
	inodes := socketInodes(fmt.Sprintf("%s/%d/fd", procRoot, p.Pid))
	if len(inodes) == 0 {
		return
	}
	if st, err := procstat.Read(procRoot, p.Pid); err != nil || st.Start != p.Start {
		return // exited, or the pid names a stranger now
	}
	for _, ino := range inodes {
		if cur, seen := owner[ino]; !seen || p.Pid < cur {
			owner[ino] = p.Pid // the lowest pid, whatever order the set came in
		}
	}
}

// socketInodes lists the socket inodes behind the fds in dir.
func socketInodes(dir string) []uint64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil // exited, or not ours to read
	}
	var out []uint64
	for _, e := range ents {
		link, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue
		}
		if s, ok := strings.CutPrefix(link, "socket:["); ok {
			if ino, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
				out = append(out, ino)
			}
		}
	}
	return out
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

// ipv6 writes a 16-byte address as RFC 5952 text (net/netip's form, without
// its package init, which start-up pays for): a mapped IPv4 address as
// dotted quad, lowercase hex groups, the first longest run of two or more
// zero groups as "::".
func ipv6(b []byte) string {
	if [12]byte(b) == [12]byte{10: 0xff, 11: 0xff} {
		return fmt.Sprintf("%d.%d.%d.%d", b[12], b[13], b[14], b[15])
	}
	var g [8]uint16
	for i := range g {
		g[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	zs, zn := -1, 1 // the run compressed: start, length (a single zero group is not)
	for i := 0; i < 8; {
		j := i
		for j < 8 && g[j] == 0 {
			j++
		}
		if j-i > zn {
			zs, zn = i, j-i
		}
		i = max(j, i+1)
	}
	var out []byte
	for i := 0; i < 8; i++ {
		if i == zs {
			out = append(out, "::"...)
			i += zn - 1
			continue
		}
		if len(out) > 0 && out[len(out)-1] != ':' {
			out = append(out, ':')
		}
		out = strconv.AppendUint(out, uint64(g[i]), 16)
	}
	return string(out)
}
