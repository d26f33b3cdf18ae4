package reaper

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/linux"
)

// checkProcfs verifies that root is a mounted procfs that can enumerate
// processes: its filesystem magic is PROC_SUPER_MAGIC, its directory lists
// process entries, and this process's own stat file parses and names this
// process's parent (so root is the /proc of shellsup's pid namespace). It
// runs before every command, so it reads one directory block rather than
// all of /proc.
func checkProcfs(root string) error {
	var st unix.Statfs_t
	if err := linux.Statfs(root, &st); err != nil {
		return &UnavailableError{What: "checking " + root, Err: err}
	}
	if st.Type != unix.PROC_SUPER_MAGIC {
		return &UnavailableError{What: "checking " + root, Err: fmt.Errorf("%s is not a mounted procfs (filesystem magic 0x%x)", root, st.Type)}
	}
	d := procDir{root: root}
	if err := d.listable(); err != nil {
		return &UnavailableError{What: "listing processes in " + root, Err: err}
	}
	self := os.Getpid()
	p, err := d.stat(self)
	if err != nil {
		return &UnavailableError{What: "reading " + root + "/" + strconv.Itoa(self) + "/stat", Err: err}
	}
	if p.ppid != os.Getppid() {
		return &UnavailableError{What: "reading " + root + "/" + strconv.Itoa(self) + "/stat", Err: fmt.Errorf("parent pid %d, want %d: %s does not describe this pid namespace", p.ppid, os.Getppid(), root)}
	}
	return nil
}
