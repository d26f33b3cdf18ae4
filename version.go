// Package shellsup is the module root. It holds the release version, read
// from the VERSION file next to it: the one place the version is written.
// The binary reports it (shellsup --version), the Python wheel's builder
// reads the same file, and tests check that every copy agrees.
//
// The Go binding is github.com/shellsup/shellsup/bindings/go.
package shellsup

import (
	_ "embed"
	"strings"
)

//go:embed VERSION
var versionFile string

// Version is the release version, e.g. "0.1.0".
func Version() string { return strings.TrimSpace(versionFile) }
