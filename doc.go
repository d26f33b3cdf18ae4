// Package shellsup is the module root. It holds the release version, read
// from the VERSION file next to it: the one place the version is written.
// The binary reports it (shellsup --version), the Python wheel's builder
// reads the same file, and tests check that every copy agrees.
//
// The Go binding is github.com/shellsup/shellsup/bindings/go.
package shellsup
