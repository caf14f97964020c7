//go:build !portablefs

package mount

import (
	"bytes"
	"errors"
	"io/fs"
	"slices"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The Linux fast paths of the sandbox copy: directories read with
// getdents64 into pooled buffers, data copied with copy_file_range, and
// the destination's directories opened with openat2's RESOLVE_BENEATH.
// copytree_other.go has what other systems (and a build with the
// portablefs tag, which tests the fallbacks on Linux) use instead.

// direntBufs are the buffers directories are read into.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// The layout of the records getdents64 returns (struct linux_dirent64).
var (
	direntIno    = int(unsafe.Offsetof(unix.Dirent{}.Ino))
	direntReclen = int(unsafe.Offsetof(unix.Dirent{}.Reclen))
	direntName   = int(unsafe.Offsetof(unix.Dirent{}.Name))
)

// readRels lists the directory open as fd (path) as the paths of its
// entries below the directory rel: rel + "/" + name, or the name alone
// when rel is "". The paths of what one read of the directory returns are
// substrings of one string, made to measure: a directory costs a few
// allocations, not two per entry (the copy reads every directory of the
// project).
func readRels(fd int, path, rel string) ([]string, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var rels []string
	for reads := 0; ; reads++ {
		n, err := unix.Getdents(fd, buf)
		if err != nil {
			return nil, &fs.PathError{Op: "readdir", Path: path, Err: err}
		}
		if n <= 0 {
			if reads > 1 {
				// A name renamed over while the directory was read may
				// be listed twice: once is what a listing means.
				rels = uniqueRels(rels)
			}
			return rels, nil
		}
		// Twice over the records: to measure, then to copy.
		size, count := 0, 0
		if err := eachDirent(buf[:n], func(name []byte) {
			size += len(name)
			if rel != "" {
				size += len(rel) + 1
			}
			count++
		}); err != nil {
			return nil, &fs.PathError{Op: "readdir", Path: path, Err: err}
		}
		if count == 0 {
			continue
		}
		block := make([]byte, 0, size)
		rels = slices.Grow(rels, count)
		eachDirent(buf[:n], func(name []byte) {
			if rel != "" {
				block = append(block, rel...)
				block = append(block, '/')
			}
			block = append(block, name...)
		})
		all := unsafe.String(unsafe.SliceData(block), len(block)) // block is not written again
		eachDirent(buf[:n], func(name []byte) {
			m := len(name)
			if rel != "" {
				m += len(rel) + 1
			}
			rels = append(rels, all[:m])
			all = all[m:]
		})
	}
}

// eachDirent calls f with the name of each entry of buf, records of
// getdents64, but "." and "..".
func eachDirent(buf []byte, f func(name []byte)) error {
	for off := 0; off < len(buf); {
		if off+direntName > len(buf) {
			return unix.EIO
		}
		reclen := int(*(*uint16)(unsafe.Pointer(&buf[off+direntReclen])))
		if reclen <= direntName || off+reclen > len(buf) {
			return unix.EIO
		}
		ino := *(*uint64)(unsafe.Pointer(&buf[off+direntIno]))
		name := buf[off+direntName : off+reclen]
		off += reclen
		if ino == 0 {
			continue // an entry removed (as readdir(3))
		}
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if len(name) == 0 || string(name) == "." || string(name) == ".." {
			continue
		}
		f(name)
	}
	return nil
}

// copyData copies size bytes from in to out: copy_file_range (a clone on
// file systems that share blocks), or read and write when refused.
func copyData(in, out int, size int64) error {
	var done int64
	for done < size {
		n, err := unix.CopyFileRange(in, nil, out, nil, int(min(size-done, 1<<30)), 0)
		if err != nil {
			if done == 0 && (errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP)) {
				break
			}
			return err
		}
		if n == 0 {
			return nil // the file shrank meanwhile
		}
		done += int64(n)
	}
	if done >= size {
		return nil
	}
	return copyRest(in, out)
}

// openBeneath opens the directory rel (slashes; "" for the root) below
// the directory rootfd, through no symlink.
func openBeneath(rootfd int, rel string) (int, error) {
	if rel == "" {
		rel = "."
	}
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for {
		fd, err := unix.Openat2(rootfd, rel, &how)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
			continue // a rename elsewhere meanwhile: try again
		case errors.Is(err, unix.ENOSYS):
			return openComponents(rootfd, rel)
		}
		return -1, err
	}
}

// setDirTimes sets the access and modification times of the directory
// open as fd.
func setDirTimes(fd int, t unix.Timespec) error { return futimens(fd, t) }
