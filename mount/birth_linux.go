package mount

import (
	"time"

	"golang.org/x/sys/unix"
)

// birthTime returns the birth time of the entry name in the directory
// fd (not followed), and false where the file system keeps none.
func birthTime(fd int, name string) (time.Time, bool) {
	var stx unix.Statx_t
	if unix.Statx(fd, name, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BTIME, &stx) != nil || stx.Mask&unix.STATX_BTIME == 0 {
		return time.Time{}, false
	}
	return time.Unix(stx.Btime.Sec, int64(stx.Btime.Nsec)), true
}
