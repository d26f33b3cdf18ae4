// Package decoder turns the raw bytes of a command's stdout and stderr into the text shellsup
// captures.
//
// The guarantee: the text of each stream equals Python's raw.decode("utf-8", "replace") of that
// stream's bytes, however the bytes were split into reads; and a [Capture] never holds more than its
// budget, marker included, and emits the truncation marker at most once, on the stream that
// overflowed.
//
// Invalid bytes become U+FFFD by the maximal-subpart rule of Unicode and WHATWG, which Go's
// [unicode/utf8.DecodeRune] and [strings.ToValidUTF8] do not follow: "\xE2\x82A" decodes to
// "\uFFFDA", "\xFF\xFE" to two U+FFFD, an incomplete sequence at EOF to one U+FFFD.
//
// The non-goal: the package does no I/O and does not interpret the text. It does not read pipes,
// split lines, strip terminal escapes or deliver progress; callers read, and forward what Capture
// returns, in the order it returns it. It keeps the head of the output only, never a tail.
package decoder
