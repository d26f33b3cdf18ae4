//go:build !linux

package shellsup

import "os"

// pinFile keeps path open (never used: platformCheck fails first).
func pinFile(path string) (*os.File, error) { return os.Open(path) }
