//go:build !plantbug

package main

import "github.com/shellsup/shellsup/decoder"

// closeStream flushes stream s at EOF, as shellsup's reader does.
func closeStream(c *decoder.Capture, s decoder.Stream, emit func(decoder.Stream, string)) {
	c.CloseFunc(s, emit)
}
