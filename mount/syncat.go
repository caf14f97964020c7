package mount

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Sync-back reads the sandbox and writes the real tree through directory
// descriptors, one path component at a time, and never follows a
// symbolic link below either root: a directory of the real tree that
// became a link (to a place outside the project, or elsewhere in it)
// after the sandbox was made is not written through, and neither is a
// link the agent left in the sandbox read through.

var (
	// errLinkOnPath is the error of a path one of whose directories is a
	// symbolic link.
	errLinkOnPath = errors.New("a directory on the way is a symbolic link")
	// errFileOnPath is the error of a path one of whose directories is
	// not a directory.
	errFileOnPath = errors.New("a directory on the way is not a directory")
	// errExists is returned by writeFileAt when a file appeared at the
	// name of a file it was to create.
	errExists = errors.New("a file appeared there meanwhile")
)

// typeChanged reports whether err says that a directory on the way to a
// path is a link or not a directory.
func typeChanged(err error) bool {
	return errors.Is(err, errLinkOnPath) || errors.Is(err, errFileOnPath)
}

// fdTree is a directory tree read or written by descriptors, following no
// symbolic link below its root.
type fdTree struct {
	root string
	fd   int // the root, -1 until opened
}

func newFdTree(root string) *fdTree { return &fdTree{root: root, fd: -1} }

func (t *fdTree) close() {
	if t.fd >= 0 {
		unix.Close(t.fd)
		t.fd = -1
	}
}

// path returns the path of rel, a slash path relative to the root.
func (t *fdTree) path(rel string) string { return filepath.Join(t.root, filepath.FromSlash(rel)) }

// openDir returns a descriptor, for the caller to close, of the directory
// rel ("" is the root), following no link; with create, the directories
// missing on the way are made. A link or a non-directory on the way is
// errLinkOnPath or errFileOnPath, a missing directory fs.ErrNotExist.
func (t *fdTree) openDir(rel string, create bool) (int, error) {
	if t.fd < 0 {
		fd, err := unix.Open(t.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: t.root, Err: err}
		}
		t.fd = fd
	}
	if rel == "" || rel == "." {
		fd, err := unix.FcntlInt(uintptr(t.fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return -1, &fs.PathError{Op: "dup", Path: t.root, Err: err}
		}
		return fd, nil
	}
	fd, done := t.fd, ""
	for _, name := range strings.Split(rel, "/") {
		done = path.Join(done, name)
		next, err := openDirAt(fd, name)
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(fd, name, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = openDirAt(fd, name)
			}
		}
		if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) {
			err = errFileOnPath
			var st unix.Stat_t
			if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = errLinkOnPath
			}
		}
		if fd != t.fd {
			unix.Close(fd)
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: t.path(done), Err: err}
		}
		fd = next
	}
	return fd, nil
}

// openDirAt opens the directory name of dirfd, following no link and never
// blocking (on a FIFO at that name).
func openDirAt(dirfd int, name string) (int, error) {
	return unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
}

// openFileAt opens the file name of dirfd for reading, following no link
// and never blocking (on a FIFO at that name).
func openFileAt(dirfd int, name string) (int, error) {
	return unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
}

// lstat stats the entry rel, following no link; a missing entry, or one
// below a non-directory, is fs.ErrNotExist; one below a link is
// errLinkOnPath.
func (t *fdTree) lstat(rel string, st *unix.Stat_t) error {
	dir, name := splitRel(rel)
	fd, err := t.openDir(dir, false)
	if errors.Is(err, errFileOnPath) {
		return fs.ErrNotExist
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Fstatat(fd, name, st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "lstat", Path: t.path(rel), Err: err}
	}
	return nil
}

// readlink returns the target of the link rel, following no link on the
// way.
func (t *fdTree) readlink(rel string) (string, error) {
	dir, name := splitRel(rel)
	fd, err := t.openDir(dir, false)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	return readlinkAt(fd, name)
}

// splitRel splits a slash path into its directory ("" for the root) and
// its last name.
func splitRel(rel string) (dir, name string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", rel
	}
	return rel[:i], rel[i+1:]
}

// tempPrefix starts the name of the temporary files sync-back writes
// files through.
const tempPrefix = ".workforce-sync-"

// tempName returns the name of the temporary file through which a sync of
// the session writes the file name, in its directory: the same on every
// sync of the session, so that one an interrupted sync left is removed by
// the next sync that reaches the file.
func (s *Session) tempName(name string) string {
	h := fnv.New64a()
	h.Write([]byte(filepath.Base(s.Dir)))
	h.Write([]byte{0})
	h.Write([]byte(name))
	return fmt.Sprintf("%s%016x", tempPrefix, h.Sum64())
}

// syncHook, when set (by tests), is called at the stages of a write:
// "written" when the data is on disk and not yet in place, "named" when
// the temporary file has a name in the target directory.
var syncHook func(stage string)

func hook(stage string) {
	if syncHook != nil {
		syncHook(stage)
	}
}

// writeFileAt writes the size bytes of the regular file src as name in
// the directory dirfd, whose path is dir, with the permission bits perm:
// the data is on disk before it is in place, and in place durably. A hole
// of src stays a hole where the file system can tell (copySparse). With
// replace false, a file that appeared at name meanwhile is left as it is
// and errExists returned. The file is written unnamed where the file
// system allows (nothing is left behind when the process dies), else as
// tmp, which is removed first if an earlier write left it.
func writeFileAt(dirfd int, dir, name, tmp string, src int, size int64, perm uint32, replace bool) error {
	unlinkTemp(dirfd, tmp)
	err := errNoAnon
	if anonTemps {
		err = writeAt(dirfd, dir, name, tmp, src, size, perm, replace, true)
	}
	if errors.Is(err, errNoAnon) {
		err = writeAt(dirfd, dir, name, tmp, src, size, perm, replace, false)
	}
	if err != nil {
		return err
	}
	if err := unix.Fsync(dirfd); err != nil && !errors.Is(err, unix.EINVAL) {
		return &fs.PathError{Op: "sync", Path: dir, Err: err}
	}
	return nil
}

// anonTemps says to write files unnamed where the file system allows;
// tests turn it off to exercise the named temporary files.
var anonTemps = true

// errNoAnon says that a file cannot be written unnamed here.
var errNoAnon = errors.New("no unnamed temporary files")

// unlinkTemp removes the temporary file tmp of dirfd, if there is one.
func unlinkTemp(dirfd int, tmp string) {
	var st unix.Stat_t
	if unix.Fstatat(dirfd, tmp, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		_ = unix.Unlinkat(dirfd, tmp, 0)
	}
}

func writeAt(dirfd int, dir, name, tmp string, src int, size int64, perm uint32, replace, anon bool) error {
	var fd int
	var err error
	if anon {
		if fd, err = openAnon(dirfd); err != nil {
			return errNoAnon
		}
	} else {
		fd, err = unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return &fs.PathError{Op: "create", Path: filepath.Join(dir, tmp), Err: err}
		}
	}
	named := !anon // tmp exists
	defer func() {
		if fd >= 0 {
			unix.Close(fd)
		}
		if named {
			_ = unix.Unlinkat(dirfd, tmp, 0)
		}
	}()
	target := filepath.Join(dir, name)
	if err := copySparse(src, fd, size); err != nil {
		return &fs.PathError{Op: "write", Path: target, Err: err}
	}
	// Never a set-user-ID or set-group-ID bit: perm is the permission
	// bits alone.
	if err := unix.Fchmod(fd, perm&0o777); err != nil {
		return &fs.PathError{Op: "chmod", Path: target, Err: err}
	}
	if err := unix.Fsync(fd); err != nil {
		return &fs.PathError{Op: "sync", Path: target, Err: err}
	}
	hook("written")
	if anon {
		at := name
		if replace {
			at = tmp
		}
		if err := linkAnon(fd, dirfd, at); err != nil {
			if errors.Is(err, unix.EEXIST) && !replace {
				return errExists
			}
			return errNoAnon
		}
		if !replace {
			return nil
		}
		named = true
	}
	unix.Close(fd)
	fd = -1
	hook("named")
	if replace {
		err = unix.Renameat(dirfd, tmp, dirfd, name)
	} else {
		err = renameNoReplace(dirfd, tmp, name)
	}
	if errors.Is(err, unix.EEXIST) && !replace {
		return errExists
	}
	if err != nil {
		return &fs.PathError{Op: "rename", Path: target, Err: err}
	}
	named = false
	return nil
}

// linkNoReplace gives the file tmp of dirfd the name name too, unless
// there is a file at name (unix.EEXIST), and removes tmp; where the file
// system has no hard links, it renames tmp when nothing is at name.
func linkNoReplace(dirfd int, tmp, name string) error {
	err := unix.Linkat(dirfd, tmp, dirfd, name, 0)
	if err == nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
		return nil
	}
	if errors.Is(err, unix.EEXIST) {
		return err
	}
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		return unix.EEXIST
	}
	return unix.Renameat(dirfd, tmp, dirfd, name)
}

// sameData reports whether the files a and b, of size bytes each, have the
// same bytes.
func sameData(a, b int, size int64) (bool, error) {
	pa, pb := bufPool.Get().(*[]byte), bufPool.Get().(*[]byte)
	defer bufPool.Put(pa)
	defer bufPool.Put(pb)
	bufA, bufB := *pa, (*pb)[:len(*pa)]
	for off := int64(0); off < size; {
		n := int(min(int64(len(bufA)), size-off))
		if err := preadFull(a, bufA[:n], off); err != nil {
			return false, err
		}
		if err := preadFull(b, bufB[:n], off); err != nil {
			if errors.Is(err, errShort) {
				return false, nil
			}
			return false, err
		}
		if !bytes.Equal(bufA[:n], bufB[:n]) {
			return false, nil
		}
		off += int64(n)
	}
	return true, nil
}

var errShort = errors.New("the file is shorter than it was")

// preadFull reads len(buf) bytes of fd at off.
func preadFull(fd int, buf []byte, off int64) error {
	for len(buf) > 0 {
		n, err := unix.Pread(fd, buf, off)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return errShort
		}
		buf, off = buf[n:], off+int64(n)
	}
	return nil
}

// copyRangeRW copies n bytes of in at off to out at the same offset, by
// reading and writing.
func copyRangeRW(in, out int, off, n int64) error {
	p := bufPool.Get().(*[]byte)
	defer bufPool.Put(p)
	buf := *p
	for n > 0 {
		m := int(min(int64(len(buf)), n))
		if err := preadFull(in, buf[:m], off); err != nil {
			return err
		}
		for w := buf[:m]; len(w) > 0; {
			k, err := unix.Pwrite(out, w, off)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				return err
			}
			w, off = w[k:], off+int64(k)
		}
		n -= int64(m)
	}
	return nil
}
