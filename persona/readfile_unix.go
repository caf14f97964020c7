//go:build unix

package persona

import (
	"io/fs"
	"os"
	"syscall"
)

// readFile reads a whole small file with plain system calls: open, read,
// close. os.ReadFile also registers the file with the runtime poller and
// stats it, which triples the system calls when a layer holds thousands of
// persona files, and system calls are what loading a layer spends its time
// on.
//
// The file is read into buf, grown as needed, and the result returned.
// With once set, readFile stops after the first read that does not fill
// the buffer, saving the read that would return end-of-file. A local
// regular file is read whole that way; a short read that is not the end
// (a network file system) leaves a truncated document, which the caller
// detects because it does not parse, and reads again without once.
func readFile(path string, once bool, buf []byte) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EISDIR {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if err != nil {
			return nil, os.NewSyscallError("read "+path, err)
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if once && len(buf) < cap(buf) {
			return buf, nil
		}
	}
}
