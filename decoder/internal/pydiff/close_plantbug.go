//go:build plantbug

package main

import "github.com/shellsup/shellsup/decoder"

// closeStream is the planted bug: it never flushes stdout, so the U+FFFD for a sequence left
// incomplete at EOF on stdout is lost.
func closeStream(c *decoder.Capture, s decoder.Stream, emit func(decoder.Stream, string)) {
	if s == decoder.Stdout {
		return
	}
	c.CloseFunc(s, emit)
}
