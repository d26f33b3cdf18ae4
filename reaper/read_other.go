//go:build !linux

package reaper

import "os"

// readSmall reads a small file into buf.
func readSmall(path string, buf []byte) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close() // read-only
	return f.Read(buf)
}
