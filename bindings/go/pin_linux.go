package shellsup

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// pinSeals make the copy immutable: no write, no resize, no unsealing.
const pinSeals = unix.F_SEAL_WRITE | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_SEAL

// pinFile copies the executable at path into a sealed memfd, which a
// command of the caller's uid can neither write nor replace: every later
// run executes these bytes, whatever happens to path. Where memfds are
// refused (an old kernel, vm.memfd_noexec=2), it keeps path open instead
// and runs that inode: a rename over path or a plant earlier on $PATH no
// longer reaches later runs, an in-place rewrite of the file still does.
func pinFile(path string) (*os.File, error) {
	src, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening %s to pin it: %w", path, err)
	}
	mem, err := memfd()
	if err != nil {
		return src, nil
	}
	defer src.Close()
	if _, err := io.Copy(mem, src); err != nil {
		mem.Close()
		return nil, fmt.Errorf("copying %s into a memfd: %w", path, err)
	}
	if _, err := unix.FcntlInt(mem.Fd(), unix.F_ADD_SEALS, pinSeals); err != nil {
		mem.Close()
		return nil, fmt.Errorf("sealing the memfd copy of %s: %w", path, err)
	}
	return mem, nil
}

// memfd creates an executable, sealable, close-on-exec memfd, asking for
// MFD_EXEC where the kernel knows it (6.3 and later warn without it).
func memfd() (*os.File, error) {
	flags := unix.MFD_CLOEXEC | unix.MFD_ALLOW_SEALING
	fd, err := unix.MemfdCreate("shellsup", flags|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) {
		fd, err = unix.MemfdCreate("shellsup", flags)
	}
	if err != nil {
		return nil, fmt.Errorf("creating a memfd: %w", err)
	}
	return os.NewFile(uintptr(fd), "memfd:shellsup"), nil
}
