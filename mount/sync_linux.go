//go:build linux

package mount

import (
	"errors"
	"strconv"

	"golang.org/x/sys/unix"
)

// openAnon opens a new unnamed file in the directory dirfd, for linkAnon
// to name once it is written: a process killed while writing it leaves
// nothing behind.
func openAnon(dirfd int) (int, error) {
	return unix.Openat(dirfd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
}

// linkAnon names the unnamed file fd name in the directory dirfd; a file
// at name is unix.EEXIST.
func linkAnon(fd, dirfd int, name string) error {
	err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), dirfd, name, unix.AT_SYMLINK_FOLLOW)
	if err == nil || errors.Is(err, unix.EEXIST) {
		return err
	}
	// Without /proc: by the descriptor itself, which needs a privilege.
	return unix.Linkat(fd, "", dirfd, name, unix.AT_EMPTY_PATH)
}

// renameNoReplace renames tmp to name in dirfd unless there is a file at
// name (unix.EEXIST).
func renameNoReplace(dirfd int, tmp, name string) error {
	err := unix.Renameat2(dirfd, tmp, dirfd, name, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return linkNoReplace(dirfd, tmp, name)
	}
	return err
}

// renameAside renames name to tmp in dirfd unless there is an entry at
// tmp (unix.EEXIST); a file system that cannot is unix.EINVAL (or
// unix.ENOSYS on an old kernel).
func renameAside(dirfd int, name, tmp string) error {
	return unix.Renameat2(dirfd, name, dirfd, tmp, unix.RENAME_NOREPLACE)
}

// exchangeAt swaps the names a and b of dirfd, both of which must exist,
// in one step (renameat2 RENAME_EXCHANGE); a file system that cannot is
// unix.EINVAL (or unix.ENOSYS on an old kernel).
func exchangeAt(dirfd int, a, b string) error {
	return unix.Renameat2(dirfd, a, dirfd, b, unix.RENAME_EXCHANGE)
}

// copySparse copies the size bytes of in to out, the empty file it
// writes, keeping holes: only the data extents are copied (SEEK_DATA,
// SEEK_HOLE), each by copy_file_range where the file systems allow, and
// the rest is left unwritten.
func copySparse(in, out int, size int64) error {
	for off := int64(0); off < size; {
		data, err := unix.Seek(in, off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break // a hole to the end
		}
		end := size
		if err != nil {
			data = off // no hole information: all data
		} else if hole, err := unix.Seek(in, data, unix.SEEK_HOLE); err == nil {
			end = min(hole, size)
		}
		if data >= end {
			break
		}
		if err := copyRange(in, out, data, end-data); err != nil {
			return err
		}
		off = end
	}
	return unix.Ftruncate(out, size)
}

// copyRange copies n bytes of in at off to out at the same offset.
func copyRange(in, out int, off, n int64) error {
	roff, woff := off, off
	for n > 0 {
		m, err := unix.CopyFileRange(in, &roff, out, &woff, int(min(n, 1<<30)), 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			if errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) {
				return copyRangeRW(in, out, roff, n)
			}
			return err
		}
		if m == 0 {
			return errShort
		}
		n -= int64(m)
	}
	return nil
}
