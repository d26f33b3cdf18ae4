package cgroup

import (
	"fmt"
	"strconv"
	"strings"
)

// MinMemory is the smallest --max-memory accepted: below it a login shell
// cannot even start.
const MinMemory = 4 << 20

// ParseBytes reads a byte count: a whole number, optionally followed by K,
// M, G or T (powers of 1024, upper or lower case, an optional trailing B
// or iB), e.g. "512K", "64M", "1G", "1048576".
func ParseBytes(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "IB"), "B")
	mult := int64(1)
	if n := len(t); n > 0 {
		if shift, ok := map[byte]uint{'K': 10, 'M': 20, 'G': 30, 'T': 40}[t[n-1]]; ok {
			mult, t = 1<<shift, t[:n-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v <= 0 || v > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a byte count: use a whole number of bytes, optionally with a K, M, G or T suffix (powers of 1024), e.g. 64M", s)
	}
	return v * mult, nil
}
