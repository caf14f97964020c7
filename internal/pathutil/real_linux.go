package pathutil

import (
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Real returns path with every symlink resolved, as filepath.EvalSymlinks
// does, in three system calls whatever its depth (EvalSymlinks makes one
// per path element: discovery resolves the start directory and every file
// it reads, often forty elements deep, and a run resolves every path it
// seals into the sandbox and every directory its launcher keeps): the
// path is opened with O_PATH, which reads nothing and cannot block, and
// the kernel's name of that descriptor is read back from /proc. A
// relative path, a system without /proc, or a name read back that is not
// a path (removed meanwhile) is EvalSymlinks's.
func Real(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return filepath.EvalSymlinks(path)
	}
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
