// Package redact replaces secrets in a stream of decoded text before it is
// captured or forwarded.
//
// The guarantee: a secret that matches a pattern never leaves a [Stream],
// however the text was split into writes, as long as the secret lies within
// one line (a PEM private key block is the one multi-line pattern, and is
// handled as a block). A Stream holds back the text of the line in progress
// and releases each line when it is complete (at "\n" or "\r"), when it
// grows past [MaxHold] bytes, or at Close; so with redaction on, a line that
// has no end yet (a prompt, a progress bar without "\r") waits for its end.
//
// A Stream's work is linear in the text: it holds at most [MaxHold] bytes of
// a line (64 KiB of a PEM block), and a match still growing past MaxHold is
// replaced from its start while what continues it is dropped as it comes.
//
// The non-goal: redaction is pattern matching on known token shapes, not a
// proof that no secret is printed. A secret printed in a shape no pattern
// knows, or longer than [MaxToken] bytes inside a line longer than
// [MaxHold] that only matches once it is complete, is not caught.
package redact
