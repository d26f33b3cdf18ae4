package supervisor

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/shellsup/shellsup/internal/linux"

	"golang.org/x/sys/unix"
)

// openWorkdir returns the directory bash is to start in, and a function to
// call once it has been forked. Without a workspace that is cfg.Dir as is.
// With one, cfg.Dir (the working directory as checked against the
// workspace, every link resolved) is opened now with no symbolic link
// allowed on the way (openat2 RESOLVE_NO_SYMLINKS), and bash starts in the
// directory opened, through /proc/self/fd/N: a link swapped into the path
// since the check fails the run instead of leading bash out of the
// workspace. A kernel without openat2 (before 5.6) gets the resolved path.
func openWorkdir(cfg Config) (dir string, done func(), err error) {
	if cfg.Workspace == "" {
		return cfg.startDir(), func() {}, nil
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
	fd, err := linux.Openat2(unix.AT_FDCWD, cfg.startDir(), &how)
	switch {
	case errors.Is(err, unix.ENOSYS):
		return cfg.startDir(), func() {}, nil
	case err != nil:
		return "", nil, fmt.Errorf("opening working directory %q (in workspace %q) with no symbolic link on the way: %w", cfg.startDir(), cfg.Workspace, err)
	}
	return "/proc/self/fd/" + strconv.Itoa(fd), func() { unix.Close(fd) }, nil // O_PATH: nothing to flush
}
