package environ

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
)

// FallbackLocale is the UTF-8 locale the agent environment names when the
// host has none of [LocaleCandidates] installed: glibc 2.35 and later build
// it in, and musl's every locale is UTF-8.
const FallbackLocale = "C.UTF-8"

// LocaleCandidates are the locales, in order of preference, that
// [UTF8Locale] looks for: C.UTF-8 first (no translations, byte-order
// collation: output that does not change with the host), then en_US.UTF-8.
var LocaleCandidates = []string{"C.UTF-8", "en_US.UTF-8"}

// LocaleDir is where glibc keeps compiled locales: one directory per locale
// (C.utf8/LC_CTYPE) and the archive most distributions use instead
// (locale-archive).
const LocaleDir = "/usr/lib/locale"

// UTF8Locale is the locale the agent environment puts in LC_ALL and LANG:
// the first of [LocaleCandidates] installed under root+[LocaleDir], else
// [FallbackLocale]. A locale is installed when its directory holds
// LC_CTYPE (under its name or glibc's normalised one, C.utf8), or when the
// name table of locale-archive lists it. The check costs a few stats and,
// with an archive, one read of its header and name table, never of the
// locale data.
func UTF8Locale(root string) string {
	dir := filepath.Join(root, LocaleDir)
	var archive []byte
	read := false
	for _, name := range LocaleCandidates {
		norm := normaliseLocale(name)
		for _, d := range []string{name, norm} {
			if st, err := os.Stat(filepath.Join(dir, d, "LC_CTYPE")); err == nil && !st.IsDir() {
				return name
			}
		}
		if !read {
			archive, read = archiveNames(filepath.Join(dir, "locale-archive")), true
		}
		if bytes.Contains(archive, []byte("\x00"+norm+"\x00")) {
			return name
		}
	}
	return FallbackLocale
}

// normaliseLocale spells a locale's codeset as glibc's files name it:
// lowercase, without punctuation (en_US.UTF-8 → en_US.utf8).
func normaliseLocale(name string) string {
	lang, codeset, ok := strings.Cut(name, ".")
	if !ok {
		return name
	}
	var b strings.Builder
	for _, r := range strings.ToLower(codeset) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return lang + "." + b.String()
}

// Layout of glibc's locale-archive header (locarchive.h: struct locarhead),
// in the host's byte order.
const (
	archiveMagic     = 0xde020109
	archiveHeader    = 32      // magic, serial, namehash offset/used/size, string offset/used/size
	archiveNamesMax  = 1 << 20 // a name table beyond this is not read
	archiveStringOff = 20
)

// archiveNames is the name table of a locale archive, NUL-separated and
// with a NUL in front, or nil when there is no archive glibc would read.
func archiveNames(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, archiveHeader)
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if order.Uint32(head) != archiveMagic {
		order = binary.BigEndian
		if order.Uint32(head) != archiveMagic {
			return nil
		}
	}
	off, used := order.Uint32(head[archiveStringOff:]), order.Uint32(head[archiveStringOff+4:])
	if used == 0 || used > archiveNamesMax {
		return nil
	}
	names := make([]byte, 1+used)
	if _, err := f.ReadAt(names[1:], int64(off)); err != nil {
		return nil
	}
	return names
}
