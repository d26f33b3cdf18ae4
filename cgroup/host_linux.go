package cgroup

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Host is where the cgroup hierarchies are and where shellsup sits in
// them. Discover reads it from /proc; tests build one over a scratch tree.
type Host struct {
	Proc    string // procfs mount, "/proc"
	Unified string // the cgroup2 mount point, "" when none is mounted
	Self    string // shellsup's own cgroup v2 directory (absolute), "" when unknown
	// V1 maps a v1 controller ("pids", "memory") to shellsup's own cgroup
	// directory in that hierarchy (absolute).
	V1 map[string]string
}

// Discover finds the cgroup2 mount and the v1 controllers in
// /proc/self/mountinfo and shellsup's own cgroups in /proc/self/cgroup.
func Discover() (Host, error) {
	h := Host{Proc: "/proc", V1: map[string]string{}}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return h, fmt.Errorf("reading the mount table: %w", err)
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return h, fmt.Errorf("reading shellsup's own cgroups: %w", err)
	}
	return discoverFrom(h, mounts, own), nil
}

// mount is one cgroup filesystem: where it is and which part of its
// hierarchy it shows (not "/" inside a container's bind mount).
type mount struct{ point, root string }

// discoverFrom joins the mounts and the membership lines.
func discoverFrom(h Host, mountinfo, self []byte) Host {
	v2, v1 := cgroupMounts(mountinfo)
	sc := bufio.NewScanner(bytes.NewReader(self))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" && v2.point != "" {
			h.Unified = v2.point
			h.Self = under(v2, parts[2])
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if m, ok := v1[c]; ok {
				h.V1[c] = under(m, parts[2])
			}
		}
	}
	return h
}

// under is the directory of cgroup path p as seen through mount m.
func under(m mount, p string) string {
	rel, ok := strings.CutPrefix(p, m.root)
	if !ok {
		rel = p // outside the mounted part: the best guess; writes there fail clearly
	}
	return filepath.Join(m.point, rel)
}

// cgroupMounts reads the cgroup2 mount and the v1 mounts by controller.
// mountinfo fields: id parent dev root point opts [optional...] - fstype source superopts.
func cgroupMounts(mountinfo []byte) (mount, map[string]mount) {
	var v2 mount
	v1 := map[string]mount{}
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := indexOf(f, "-")
		if sep < 5 || len(f) < sep+4 {
			continue
		}
		m := mount{point: unescape(f[4]), root: unescape(f[3])}
		switch f[sep+1] {
		case "cgroup2":
			if v2.point == "" {
				v2 = m
			}
		case "cgroup":
			for _, o := range strings.Split(f[sep+3], ",") {
				if _, seen := v1[o]; !seen {
					v1[o] = m
				}
			}
		}
	}
	return v2, v1
}

func indexOf(f []string, s string) int {
	for i, x := range f {
		if x == s {
			return i
		}
	}
	return -1
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
