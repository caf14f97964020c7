package mount

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// futimens sets the access and modification times of the open file fd.
func futimens(fd int, t unix.Timespec) error {
	ts := [2]unix.Timespec{t, t}
	_, _, errno := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(fd), 0, uintptr(unsafe.Pointer(&ts[0])), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
