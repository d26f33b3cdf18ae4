//go:build !linux

// Command shellsup-compare measures shellsup beside other tools; it runs on Linux only.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "shellsup-compare: shellsup runs on Linux only")
	os.Exit(1)
}
