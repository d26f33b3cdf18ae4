package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRemoveTmp: everything goes, a directory the command locked too, and
// a link is removed without touching what it names.
func TestRemoveTmp(t *testing.T) {
	outside := t.TempDir()
	require.NoError(t, os.Chmod(outside, 0o751))
	dir, err := MakeTmp("test", false, 0, 0)
	require.NoError(t, err)
	st, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "d", "e"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d", "e", "f"), nil, 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "d", "l")))
	require.NoError(t, os.Chmod(filepath.Join(dir, "d"), 0))
	n, err := RemoveTmp(dir)
	require.NoError(t, err)
	assert.Equal(t, 5, n, "the directory, d, e, f and the link")
	assert.NoDirExists(t, dir)
	st, err = os.Stat(outside)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o751), st.Mode().Perm(), "the link's target was not touched")
}

// TestRemoveTmpFollowsNoSwappedLink is the second review's finding
// (2026-12-02): a process outside the run kept swapping a directory of the
// TMPDIR with a link to directories outside while the cleanup walked it,
// and a path walk chmodded (as root) what the link named. The walk goes by
// descriptors: nothing outside changes, however the swaps fall.
func TestRemoveTmpFollowsNoSwappedLink(t *testing.T) {
	outside := t.TempDir()
	for i := 0; i < 200; i++ {
		require.NoError(t, os.Mkdir(filepath.Join(outside, fmt.Sprint(i)), 0o755))
	}
	for round := 0; round < 40; round++ {
		dir, err := MakeTmp("test", false, 0, 0)
		require.NoError(t, err)
		d := filepath.Join(dir, "d")
		for i := 0; i < 50; i++ {
			require.NoError(t, os.MkdirAll(filepath.Join(d, fmt.Sprint(i)), 0o755))
		}
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() { // the racer: d becomes a link to outside and back, until stopped
			defer close(done)
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				_ = os.Rename(d, d+".real")
				_ = os.Symlink(outside, d)
				time.Sleep(50 * time.Microsecond) // the link stands a while: the walk meets it
				_ = os.Remove(d)
				_ = os.Rename(d+".real", d)
			}
		}()
		_, _ = RemoveTmp(dir) // it may fail while the racer runs; what matters is outside
		close(stop)
		<-done
		_ = os.RemoveAll(dir)
		_ = os.Remove(dir + "/d.real")
	}
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	require.Len(t, entries, 200, "nothing outside was removed")
	for _, e := range entries {
		st, err := os.Stat(filepath.Join(outside, e.Name()))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o755), st.Mode().Perm(), "%s was changed through the link", e.Name())
	}
}

// TestRemoveTmpDepthBound: a tree deeper than the bound is left, with an
// error, instead of holding a descriptor per level without end.
func TestRemoveTmpDepthBound(t *testing.T) {
	dir, err := MakeTmp("test", false, 0, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	// MkdirAll by path would pass PATH_MAX; make it level by level.
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	for i := 0; i < maxTmpDepth+2; i++ {
		require.NoError(t, unix.Mkdirat(fd, "d", 0o755))
		next, err := unix.Openat(fd, "d", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		require.NoError(t, err)
		unix.Close(fd)
		fd = next
	}
	unix.Close(fd)
	_, err = RemoveTmp(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "directories deep")
	assert.DirExists(t, dir)
}

// TestSweepTmp removes a stale shellsup's TMPDIR and nothing else: not a
// live one's, not a link or a file named like one (nor what the link
// names), not a name MakeTmp would not make.
func TestSweepTmp(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "keep"), nil, 0o644))
	dead, err := MakeTmp("1-2-3-4-dead", false, 0, 0)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dead, "d", "e"), 0o755))
	alive, err := MakeTmp("5-6-7-8-alive", false, 0, 0)
	require.NoError(t, err)
	tmp := os.Getenv("TMPDIR")
	link := filepath.Join(tmp, "shellsup-tmp-1-2-3-4-dead-42")
	require.NoError(t, os.Symlink(outside, link))
	file := filepath.Join(tmp, "shellsup-tmp-1-2-3-4-dead-43")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	odd := filepath.Join(tmp, "shellsup-tmp-1-2-3-4-dead-x")
	require.NoError(t, os.Mkdir(odd, 0o700))
	var asked []string
	swept, err := SweepTmp(func(tag string) bool {
		asked = append(asked, tag)
		return tag == "1-2-3-4-dead"
	})
	require.NoError(t, err)
	assert.Equal(t, []SweptTmp{{Path: dead, Removed: 3}}, swept)
	assert.NoDirExists(t, dead)
	assert.DirExists(t, alive)
	assert.FileExists(t, file)
	assert.DirExists(t, odd)
	assert.FileExists(t, filepath.Join(outside, "keep"), "the link was followed")
	_, err = os.Lstat(link)
	assert.NoError(t, err, "a link named like a TMPDIR is left")
	assert.ElementsMatch(t, []string{"1-2-3-4-dead", "5-6-7-8-alive", "1-2-3-4-dead", "1-2-3-4-dead"}, asked, "the names were parsed")
}

// TestRemoveTmpAsItsOwner: root removes a --user run's TMPDIR with its
// owner's rights. A root-owned directory a process of the owner's moved
// into it (which the owner could rename but not empty) is left, with an
// error; the owner's own entries go.
func TestRemoveTmpAsItsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the case is root's cleanup of another uid's TMPDIR")
	}
	dir, err := MakeTmp("test", true, 65534, 65534)
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	own := filepath.Join(dir, "own")
	require.NoError(t, os.MkdirAll(filepath.Join(own, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(own, "sub", "f"), nil, 0o644))
	for _, p := range []string{own, filepath.Join(own, "sub"), filepath.Join(own, "sub", "f")} {
		require.NoError(t, os.Chown(p, 65534, 65534))
	}
	roots := filepath.Join(dir, "zz-roots")
	require.NoError(t, os.Mkdir(roots, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(roots, "f"), []byte("root's"), 0o644))
	_, err = RemoveTmp(dir)
	require.Error(t, err, "root removed what the owner could not")
	assert.FileExists(t, filepath.Join(roots, "f"), "root's file inside the owner's TMPDIR was removed")
	assert.NoDirExists(t, own, "the owner's own entries were not removed")
	fsuid, _ := unix.SetfsuidRetUid(-1)
	assert.Equal(t, 0, fsuid, "this thread's fsuid was not put back")
}

// TestMakeTmpRefusesAParentOthersCanRename is the third review's finding 6
// (2026-12-02): with shellsup's TMPDIR a directory the --user uid could
// rename entries in, a process of that uid swapped the new TMPDIR for a
// link and root's chown gave a root file to it. Such a parent is refused;
// /tmp-like (root's, sticky) and shellsup's own private ones are used.
func TestMakeTmpRefusesAParentOthersCanRename(t *testing.T) {
	for _, c := range []struct {
		name  string
		mode  os.FileMode
		owner int
		ok    bool
	}{
		{"shellsup's own, 0700", 0o700, os.Geteuid(), true},
		{"sticky and world-writable", 0o777 | os.ModeSticky, os.Geteuid(), true},
		{"world-writable, not sticky", 0o777, os.Geteuid(), false},
		{"group-writable, not sticky", 0o770, os.Geteuid(), false},
		{"another user's", 0o755, 65534, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.owner != os.Geteuid() && os.Geteuid() != 0 {
				t.Skip("needs root to make a directory of another user's")
			}
			parent := t.TempDir()
			require.NoError(t, os.Chmod(parent, c.mode))
			require.NoError(t, os.Chown(parent, c.owner, -1))
			t.Setenv("TMPDIR", parent)
			dir, err := MakeTmp("test", false, 0, 0)
			if !c.ok {
				require.Error(t, err)
				assert.Contains(t, err.Error(), parent, "the error names the directory")
				entries, _ := os.ReadDir(parent)
				assert.Empty(t, entries, "nothing was made")
				return
			}
			require.NoError(t, err)
			st, err := os.Lstat(dir)
			require.NoError(t, err)
			assert.True(t, st.IsDir())
			assert.Equal(t, os.FileMode(0o700), st.Mode().Perm())
		})
	}
}
