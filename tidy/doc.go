// Package tidy turns a stream of decoded terminal output into the text a reader of a log wants:
// what the screen would show, line by line, without escape sequences, progress redraws or
// repeated lines.
//
// The guarantee: however the text is split into writes, a [Tidier] returns the same text. It
// removes every ECMA-48 escape sequence (CSI, OSC — hyperlinks, titles — ended by BEL or ST,
// DCS, SOS, PM and APC strings, the single shifts SS2 and SS3, charset selections such as
// ESC ( B, and every other two-character ESC sequence, in their 7-bit and C1 forms) and every C0
// control except "\n" and "\t" (and DEL); it applies carriage return, backspace, erase in line
// (CSI K) and the horizontal cursor moves CSI G, C and D to the line they act on, so a line
// redrawn a thousand times keeps only its final state ("\r\n" is a newline); and it folds three
// or more identical consecutive lines into the first and one line "… (same line N more times)",
// when that line is shorter than the copies it replaces. Its memory is bounded: a line holds at
// most the line cap given to [New] (a code point that would pass it ends the line there, released
// with a newline, and starts the next), and escape strings are consumed without being kept.
//
// Streaming: a complete line is released at its "\n" (a run of identical lines at the first
// different line, or at Close). A partial line is released by [Tidier.Flush], which the caller
// calls once the text has waited [HoldFor], so a prompt or a line that is still growing stays
// live; a line being redrawn (after a carriage return, a backspace or a cursor move) is held
// until it ends, since every state released would stay in the text. Text released of a line
// that is then redrawn stays: the line's final state follows on a line of its own, or, when it
// begins with what was released, only the rest of it.
//
// [Tidier.Removed] is exact: the UTF-8 bytes given to Write minus the bytes returned, so the
// text given equals the text returned plus Removed once the Tidier is closed.
//
// The non-goal: this is not a terminal emulator. Cursor moves between lines (CSI A, B, H …),
// scrolling regions and the alternate screen are removed without effect, so a full-screen
// program's output is its text in the order it was written; a wide character counts as one
// column.
package tidy
