//go:build !linux

// Command shellsup-soak runs shellsup many times in a row and checks nothing leaks; it runs on
// Linux only.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "shellsup-soak: shellsup runs on Linux only")
	os.Exit(1)
}
