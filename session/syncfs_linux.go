package session

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncfs flushes the file system that holds f.
func syncfs(f *os.File) error { return unix.Syncfs(int(f.Fd())) }
