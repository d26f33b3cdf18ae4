package shellsup

import (
	_ "embed"
	"strings"
)

//go:embed VERSION
var versionFile string

// Version is the release version, e.g. "0.1.0".
func Version() string { return strings.TrimSpace(versionFile) }
