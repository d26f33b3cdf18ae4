package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// FileID is a file as the kernel knows it, whatever name it has now.
type FileID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

// Grant is one place that gets write rules: the path it is reported
// under and an O_PATH descriptor of the very file the rule is made on.
type Grant struct {
	Path string
	FD   int
}

// CloseGrants closes the descriptors of gs.
func CloseGrants(gs []Grant) {
	for _, g := range gs {
		unix.Close(g.FD)
	}
}

// Pin records, by descriptors, the workspace and every directory on the
// way from it to each --protect directory (resolved paths in the
// workspace), as they are now: Grants makes its rules on these very
// directories, or refuses. The workspace is opened without following any
// link, each directory below it by name from the one above, O_NOFOLLOW.
func (p *Policy) Pin() error {
	if p.Mode != ModeWorkspaceWrite {
		return nil
	}
	ws, id, err := openWorkspace(p.Workspace)
	if err != nil {
		return err
	}
	defer unix.Close(ws)
	p.Pins = map[string]FileID{p.Workspace: id}
	for _, dir := range p.Protect {
		rel, err := filepath.Rel(p.Workspace, dir)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			continue // the workspace itself, or outside it: nothing on the way
		}
		if err := p.pinWay(ws, rel); err != nil {
			return err
		}
	}
	return nil
}

// pinWay pins each directory of rel, opened from ws one name at a time.
func (p *Policy) pinWay(ws int, rel string) error {
	dfd, path := ws, p.Workspace
	for _, name := range strings.Split(rel, "/") {
		path += "/" + name
		fd, err := unix.Openat(dfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if dfd != ws {
			unix.Close(dfd)
		}
		if err != nil {
			return fmt.Errorf("opening %q to keep it read-only: %w", path, err)
		}
		id, err := dirID(fd, path)
		if err != nil {
			unix.Close(fd)
			return err
		}
		p.Pins[path] = id
		dfd = fd
	}
	unix.Close(dfd)
	return nil
}

// openWorkspace opens the workspace O_PATH, through no link at all.
func openWorkspace(ws string) (int, FileID, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, ws, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS,
	})
	if err != nil {
		return -1, FileID{}, fmt.Errorf("opening workspace %q without following links: %w", ws, err)
	}
	id, err := dirID(fd, ws)
	if err != nil {
		unix.Close(fd)
		return -1, FileID{}, err
	}
	return fd, id, nil
}

// dirID is the identity of the directory fd, or an error if it is not one
// (a link swapped in).
func dirID(fd int, path string) (FileID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return FileID{}, fmt.Errorf("stat %q: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return FileID{}, fmt.Errorf("%q is no longer a directory (mode %#o)", path, st.Mode&unix.S_IFMT)
	}
	return FileID{Dev: st.Dev, Ino: st.Ino}, nil
}

// Grants are the places of the workspace that get write rules, with the
// --protect directories kept read-only, found in one walk by descriptors:
// the workspace, or, on the way from it to a protected directory, each
// entry beside the way (a rule covers everything beneath its directory;
// the directories on the way get none, so nothing new can be made directly
// in them). Every directory on the way must be the one Pin saw, else the
// run is refused: a link or another directory swapped in since could move
// the rules out of the workspace. The caller closes the descriptors.
func (p *Policy) Grants() ([]Grant, error) {
	ws, id, err := openWorkspace(p.Workspace)
	if err != nil {
		return nil, err
	}
	if pin, ok := p.Pins[p.Workspace]; !ok || pin != id {
		unix.Close(ws)
		return nil, fmt.Errorf("workspace %q is not the directory it was at the start (%+v, now %+v)", p.Workspace, pin, id)
	}
	var out []Grant
	if err := p.walk(ws, p.Workspace, p.Protect, &out); err != nil {
		CloseGrants(out)
		return nil, err
	}
	return out, nil
}

// walk adds the grants of the directory dfd, at path, to out; it takes
// dfd (given to out, or closed).
func (p *Policy) walk(dfd int, path string, protect []string, out *[]Grant) error {
	var on []string // protected directories beneath path, or path itself
	for _, pr := range protect {
		if pr == path || strings.HasPrefix(pr, path+"/") {
			on = append(on, pr)
		}
	}
	if len(on) == 0 {
		*out = append(*out, Grant{Path: path, FD: dfd})
		return nil
	}
	defer unix.Close(dfd)
	if slices.Contains(on, path) {
		return nil // protected: no rule beneath it
	}
	names, err := listFD(dfd, path)
	if err != nil {
		return fmt.Errorf("listing %q to keep %s read-only: %w", path, strings.Join(on, ", "), err)
	}
	for _, name := range names {
		if err := p.entry(dfd, path+"/"+name, name, on, out); err != nil {
			return err
		}
	}
	return nil
}

// entry opens one entry of the directory dfd, never following a link: a
// directory on the way to a protected one is checked against its pin and
// walked, anything else but a link gets its own grant.
func (p *Policy) entry(dfd int, path, name string, on []string, out *[]Grant) error {
	fd, err := unix.Openat(dfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT {
		return nil // gone since the listing
	}
	if err != nil {
		return fmt.Errorf("opening %q for a Landlock rule: %w", path, err)
	}
	if !onWay(path, on) {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(fd) // a link grants nothing: what it names is elsewhere
			return nil
		}
		*out = append(*out, Grant{Path: path, FD: fd})
		return nil
	}
	id, err := dirID(fd, path)
	if err == nil && id != p.Pins[path] {
		err = fmt.Errorf("%q is not the directory it was at the start (%+v, now %+v)", path, p.Pins[path], id)
	}
	if err != nil {
		unix.Close(fd)
		return fmt.Errorf("keeping %s read-only: %w", strings.Join(on, ", "), err)
	}
	return p.walk(fd, path, on, out)
}

// onWay: path is a protected directory or one on the way to one.
func onWay(path string, on []string) bool {
	for _, pr := range on {
		if pr == path || strings.HasPrefix(pr, path+"/") {
			return true
		}
	}
	return false
}

// listFD lists the directory dfd (an O_PATH descriptor) through itself,
// sorted.
func listFD(dfd int, path string) ([]string, error) {
	fd, err := unix.Openat(dfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	slices.Sort(names)
	return names, err
}

// grantedNow lists where a walk made now would make the workspace's rules
// (Grants); none where the walk refuses (so does the run's).
func (p *Policy) grantedNow() []string {
	gs, err := p.Grants()
	if err != nil {
		return []string{}
	}
	defer CloseGrants(gs)
	return grantPaths(gs)
}

func grantPaths(gs []Grant) []string {
	paths := make([]string, len(gs))
	for i, g := range gs {
		paths[i] = g.Path
	}
	return paths
}
