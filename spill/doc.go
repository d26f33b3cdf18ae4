// Package spill keeps the full raw output of a run in private files, beside
// the bounded capture.
//
// The guarantee: every byte a stream's writer hands to a [File] is in that
// file, in order, up to the file's limit; past the limit bytes are counted
// and dropped, and the cut is recorded. Files are created with O_EXCL and
// O_NOFOLLOW, mode 0600, inside a fresh 0700 directory made in a directory
// that must not be writable by group or others; no symbolic link is ever
// followed under the directory the user named.
//
// The non-goal: spill files are not rotated or compressed, and nothing
// removes them: they belong to the caller once the run has reported.
package spill
