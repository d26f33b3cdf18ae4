package environ

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeArchive writes a locale-archive whose header and name table are
// laid out as glibc's (struct locarhead), listing names.
func fakeArchive(t *testing.T, path string, order binary.ByteOrder, names ...string) {
	t.Helper()
	var table []byte
	for _, n := range names {
		table = append(append(table, n...), 0)
	}
	head := make([]byte, 64)
	order.PutUint32(head, archiveMagic)
	order.PutUint32(head[archiveStringOff:], 64)
	order.PutUint32(head[archiveStringOff+4:], uint32(len(table)))
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, append(head, table...), 0o644))
}

func localeDir(t *testing.T, root, name string) {
	t.Helper()
	dir := filepath.Join(root, LocaleDir, name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "LC_CTYPE"), []byte("x"), 0o644))
}

func TestUTF8Locale(t *testing.T) {
	archive := func(root string) string { return filepath.Join(root, LocaleDir, "locale-archive") }
	rows := []struct {
		name  string
		setup func(t *testing.T, root string)
		want  string
	}{
		{"nothing installed", func(*testing.T, string) {}, FallbackLocale},
		{"C.utf8 directory (Debian)", func(t *testing.T, r string) { localeDir(t, r, "C.utf8") }, "C.UTF-8"},
		{"C.UTF-8 directory", func(t *testing.T, r string) { localeDir(t, r, "C.UTF-8") }, "C.UTF-8"},
		{"en_US only, directory", func(t *testing.T, r string) { localeDir(t, r, "en_US.utf8") }, "en_US.UTF-8"},
		{"C first over en_US", func(t *testing.T, r string) { localeDir(t, r, "en_US.utf8"); localeDir(t, r, "C.utf8") }, "C.UTF-8"},
		{"en_US in the archive", func(t *testing.T, r string) {
			fakeArchive(t, archive(r), binary.LittleEndian, "de_DE.utf8", "en_US.utf8")
		}, "en_US.UTF-8"},
		{"big-endian archive", func(t *testing.T, r string) { fakeArchive(t, archive(r), binary.BigEndian, "en_US.utf8") }, "en_US.UTF-8"},
		{"a longer name is not a match", func(t *testing.T, r string) {
			fakeArchive(t, archive(r), binary.LittleEndian, "xen_US.utf8", "en_US.utf8x")
		}, FallbackLocale},
		{"no magic", func(t *testing.T, r string) {
			require.NoError(t, os.MkdirAll(filepath.Dir(archive(r)), 0o755))
			require.NoError(t, os.WriteFile(archive(r), []byte("\x00en_US.utf8\x00 not an archive at all, long enough"), 0o644))
		}, FallbackLocale},
		{"LC_CTYPE a directory", func(t *testing.T, r string) {
			require.NoError(t, os.MkdirAll(filepath.Join(r, LocaleDir, "en_US.utf8", "LC_CTYPE"), 0o755))
		}, FallbackLocale},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			root := t.TempDir()
			row.setup(t, root)
			assert.Equal(t, row.want, UTF8Locale(root))
		})
	}
}

// TestUTF8LocaleRealArchive: an archive made by glibc's own localedef is
// read as glibc reads it.
func TestUTF8LocaleRealArchive(t *testing.T) {
	localedef, err := exec.LookPath("localedef")
	if err != nil {
		t.Skip("needs glibc's localedef to make a real locale-archive")
	}
	if _, err := os.Stat("/usr/share/i18n/locales/en_US"); err != nil {
		t.Skip("needs the en_US locale source (/usr/share/i18n/locales) for localedef")
	}
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, LocaleDir), 0o755))
	out, err := exec.Command(localedef, "-i", "en_US", "-f", "UTF-8", "--prefix="+root, "en_US.UTF-8").CombinedOutput()
	if err != nil {
		t.Skipf("localedef could not make an archive here: %v: %s", err, out)
	}
	require.FileExists(t, filepath.Join(root, LocaleDir, "locale-archive"))
	assert.Equal(t, "en_US.UTF-8", UTF8Locale(root))
}

func TestNormaliseLocale(t *testing.T) {
	for in, want := range map[string]string{"C.UTF-8": "C.utf8", "en_US.utf8": "en_US.utf8", "de_DE.ISO-8859-1": "de_DE.iso88591", "POSIX": "POSIX"} {
		assert.Equal(t, want, normaliseLocale(in), in)
	}
}

// TestAgentSettings: every agent setting is in the environment, over what
// it had, with the locale given (or the fallback).
func TestAgentSettings(t *testing.T) {
	in := []string{"GIT_ASKPASS=/usr/bin/ksshaskpass", "COLORTERM=truecolor", "LANG=de_DE.UTF-8", "LC_ALL=de_DE.UTF-8", "HOME=/h"}
	out, _ := Build(in, Options{Agent: true, Locale: "en_US.UTF-8"})
	for _, kv := range AgentDefaults {
		assert.Contains(t, out, kv)
	}
	for _, kv := range []string{"GIT_ASKPASS=", "SSH_ASKPASS=", "GCM_INTERACTIVE=Never", "PYTHONUNBUFFERED=1", "COLORTERM=", "GH_PAGER=cat",
		"LC_ALL=en_US.UTF-8", "LANG=en_US.UTF-8"} {
		assert.Contains(t, out, kv)
	}
	assert.NotContains(t, out, "COLORTERM=truecolor")
	assert.NotContains(t, out, "LANG=de_DE.UTF-8")
	out, _ = Build(nil, Options{Agent: true})
	assert.Contains(t, out, "LC_ALL="+FallbackLocale)
	assert.Contains(t, out, "LANG="+FallbackLocale)
	out, _ = Build([]string{"LANG=de_DE.UTF-8"}, Options{Locale: "C.UTF-8"})
	assert.Equal(t, []string{"LANG=de_DE.UTF-8", "HOME=" + NoHome}, out, "without Agent the locale is left alone")
}
