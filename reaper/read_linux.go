package reaper

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/linux"
)

// openRead opens path read-only, falling back on the fd reserve.
func openRead(path string, flags int) (int, error) {
	return openFd(func() (int, error) { return linux.Open(path, unix.O_RDONLY|flags, 0) })
}

// readSmall reads a small file (a /proc stat line) into buf with one read.
func readSmall(path string, buf []byte) (int, error) {
	fd, err := openRead(path, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd) // read-only: nothing to lose
	return linux.Read(fd, buf)
}

// readFile reads a whole file (a children list, which can be long).
func readFile(path string) ([]byte, error) {
	fd, err := openRead(path, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd) // read-only: nothing to lose
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := linux.Read(fd, buf)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return out, nil
		}
		out = append(out, buf[:n]...)
	}
}

// readDirNames lists a directory opened through the fd reserve.
func readDirNames(path string) ([]string, error) {
	fd, err := openRead(path, unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	dir := os.NewFile(uintptr(fd), path)
	defer dir.Close() // read-only
	return dir.Readdirnames(-1)
}
