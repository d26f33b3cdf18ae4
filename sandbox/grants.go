package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Grants are the paths that get write rules for workspace ws with the
// directories protect kept read-only. A rule covers everything beneath its
// directory, so on the way from ws to a protected directory each entry
// beside the way gets its own rule, and the directories on the way get
// none: there nothing new can be made directly.
func Grants(ws string, protect []string) ([]string, error) {
	var on []string // protected directories in ws
	for _, p := range protect {
		if p == ws {
			return nil, nil
		}
		if strings.HasPrefix(p, ws+"/") {
			on = append(on, p)
		}
	}
	if len(on) == 0 {
		return []string{ws}, nil
	}
	entries, err := os.ReadDir(ws)
	if err != nil {
		return nil, fmt.Errorf("listing %q to keep %s read-only: %w", ws, strings.Join(on, ", "), err)
	}
	var out []string
	for _, e := range entries {
		sub, err := Grants(filepath.Join(ws, e.Name()), on)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	return out, nil
}
