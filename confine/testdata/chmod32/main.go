// Command chmod32 changes the mode of the file its first argument names
// to the octal mode of its second, with chmod(2), and exits with the
// errno it got (0 for none). Built for GOARCH=386, it makes the call
// through the 32-bit ABI (TestOverlayChmod32).
package main

import (
	"errors"
	"os"
	"strconv"
	"syscall"
)

func main() {
	mode, _ := strconv.ParseUint(os.Args[2], 8, 32)
	var errno syscall.Errno
	if err := syscall.Chmod(os.Args[1], uint32(mode)); errors.As(err, &errno) {
		os.Exit(int(errno))
	}
}
