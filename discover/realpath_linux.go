package discover

import (
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// realPath returns path with every symlink resolved, as
// filepath.EvalSymlinks does, in three system calls whatever its depth
// (EvalSymlinks makes one per path element, and discovery resolves the
// start directory and every file it reads, often forty elements deep):
// the path is opened with O_PATH, which reads nothing and cannot block,
// and the kernel's name of that descriptor is read back from /proc.
// Without /proc, or when the name read back is not a path (removed
// meanwhile), it is EvalSymlinks.
func realPath(path string) (string, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf)
	if err != nil || n == 0 || n == len(buf) || buf[0] != '/' || strings.HasSuffix(string(buf[:n]), " (deleted)") {
		return filepath.EvalSymlinks(path)
	}
	return string(buf[:n]), nil
}
