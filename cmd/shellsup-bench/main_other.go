//go:build !linux

// Command shellsup-bench measures shellsup; it runs on Linux only.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "shellsup-bench: shellsup runs on Linux only")
	os.Exit(1)
}
