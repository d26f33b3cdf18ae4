package reaper

import (
	"fmt"
	"os"
	"strconv"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// checkProcfs verifies that root is a mounted procfs that can enumerate
// processes: its filesystem magic is PROC_SUPER_MAGIC, it lists this
// process, and this process's stat file parses with the right pid.
func checkProcfs(root string) error {
	var st unix.Statfs_t
	if err := statfs(root, &st); err != nil {
		return &UnavailableError{What: "checking " + root, Err: err}
	}
	if st.Type != unix.PROC_SUPER_MAGIC {
		return &UnavailableError{What: "checking " + root, Err: fmt.Errorf("%s is not a mounted procfs (filesystem magic 0x%x)", root, st.Type)}
	}
	fs, err := procfs.NewFS(root)
	if err != nil {
		return &UnavailableError{What: "opening " + root, Err: err}
	}
	self := os.Getpid()
	procs, err := fs.AllProcs()
	if err != nil {
		return &UnavailableError{What: "listing processes in " + root, Err: err}
	}
	found := false
	for _, p := range procs {
		if p.PID == self {
			found = true
			break
		}
	}
	if !found {
		return &UnavailableError{What: "listing processes in " + root, Err: fmt.Errorf("shellsup's own pid %d is not listed (hidepid or another pid namespace?)", self)}
	}
	d := procDir{root: root}
	p, err := d.stat(self)
	if err != nil {
		return &UnavailableError{What: "reading " + root + "/" + strconv.Itoa(self) + "/stat", Err: err}
	}
	if p.ppid != os.Getppid() {
		return &UnavailableError{What: "reading " + root + "/" + strconv.Itoa(self) + "/stat", Err: fmt.Errorf("parent pid %d, want %d: %s does not describe this pid namespace", p.ppid, os.Getppid(), root)}
	}
	return nil
}

func statfs(path string, st *unix.Statfs_t) error {
	for {
		err := unix.Statfs(path, st)
		if err != unix.EINTR {
			if err != nil {
				return os.NewSyscallError("statfs", err)
			}
			return nil
		}
	}
}
