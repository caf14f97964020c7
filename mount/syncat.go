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
//
// A real file is replaced only if it is still the file that was checked
// (as the manifest has it), and a file is created only where there is
// none, so that a user writing while sync-back or live sync runs loses
// nothing (placeAt). The new file is written beside the old one, then the
// two are exchanged in one step (renameat2 RENAME_EXCHANGE) and what came
// out is compared with what was checked: the same inode, type, mode, size
// and modification time. A write made after the check, in place or by a
// rename over the file, is seen there: the user's file is put back and the
// path is a conflict, with the agent's version saved under conflicts/. A
// new file is linked or renamed to its name only if nothing is there, so
// that a file the user made meanwhile stays, as a conflict. A removal (an
// agent's deletion applied) is checked the same way (unlinkChecked): the
// file is renamed aside in its directory, replacing nothing, compared with
// what was checked, and unlinked only if it is the same; a file written
// after the check goes back (a conflict), and one the user made at the
// name meanwhile stays, the file it replaced saved under conflicts/.
// Known limits:
//
//   - a writer that holds the old file open and writes to it after the
//     exchange writes to the file being removed: that write is lost;
//   - a write that keeps the size and the modification time (a tool that
//     sets the time back) is not seen;
//   - when the user writes the file again between the exchange and the
//     exchange back (microseconds), that latest version stays and the one
//     it superseded is dropped;
//   - a sync killed between the exchange (or the rename aside of a
//     removal) and the comparison leaves the replaced file under the
//     temporary name, which the next sync of the session removes
//     unchecked;
//   - where the file system cannot exchange (some network and FUSE file
//     systems: EINVAL, or ENOSYS on an old kernel, and every system but
//     Linux), the file is checked again just before a rename over it (or
//     its removal), and a write between the two is lost.

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
// the sandbox writes the file name, in its directory: the same on every
// sync of the sandbox, so that one an interrupted sync left is removed by
// the next sync that reaches the file.
func (s *Sandbox) tempName(name string) string {
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
// replace, whatever is at name is replaced unchecked (for the session's
// own files; the real tree's go through writeFileTo); without, a file
// that appeared at name meanwhile is left as it is and errExists
// returned. The file is written unnamed where the file system allows
// (nothing is left behind when the process dies), else as tmp, which is
// removed first if an earlier write left it.
func writeFileAt(dirfd int, dir, name, tmp string, src int, size int64, perm uint32, replace bool) error {
	return writeFileTo(dirfd, dir, name, tmp, src, size, perm, put{blind: replace})
}

// writeFileTo is writeFileAt putting the file in place as p says.
func writeFileTo(dirfd int, dir, name, tmp string, src int, size int64, perm uint32, p put) error {
	unlinkTemp(dirfd, tmp)
	err := errNoAnon
	if anonTemps {
		err = writeAt(dirfd, dir, name, tmp, src, size, perm, p, true)
	}
	if errors.Is(err, errNoAnon) {
		err = writeAt(dirfd, dir, name, tmp, src, size, perm, p, false)
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

func writeAt(dirfd int, dir, name, tmp string, src int, size int64, perm uint32, p put, anon bool) error {
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
		at := tmp
		if p.creates() {
			// Named at name at once, unless a file is there: the
			// no-replace primitive is the link itself.
			p.before()
			at = name
		}
		if err := linkAnon(fd, dirfd, at); err != nil {
			if errors.Is(err, unix.EEXIST) && p.creates() {
				return errExists
			}
			return errNoAnon
		}
		if p.creates() {
			return nil
		}
		named = true
	}
	unix.Close(fd)
	fd = -1
	hook("named")
	named = false // placeAt takes tmp over
	return placeAt(dirfd, dir, name, tmp, p)
}

// beforeReplace, when set (by tests), is called with the path of a file
// of sync-back or live sync between the check of what is at its name
// (nothing, or the file as the manifest has it) and its replacement,
// once the new file is written: a writer it runs is one that raced the
// check.
var beforeReplace func(rel string)

// errChanged is returned by placeAt when the file it was to replace is no
// longer the one that was checked: that file stays in place (it is put
// back) and nothing is written.
var errChanged = errors.New("the file changed meanwhile")

// A put says what putting a file at a name may displace there.
type put struct {
	// rel is the file's path, for beforeReplace.
	rel string
	// over is the stat, as it was checked, of the file the new one
	// replaces; nil when nothing was there.
	over *unix.Stat_t
	// blind replaces whatever is at the name, unchecked: for the
	// session's own files, which no one else writes.
	blind bool
}

// creates reports whether p puts a file only where there is none.
func (p put) creates() bool { return !p.blind && p.over == nil }

func (p put) before() {
	if beforeReplace != nil && !p.blind {
		beforeReplace(p.rel)
	}
}

// placeAt puts the file tmp of dirfd, whose path is dir, at name, as p
// says, and leaves nothing at tmp:
//
//   - blind, by a rename over whatever is there;
//   - creating (p.over nil), by a rename that replaces nothing: a file at
//     name is left as it is and errExists returned;
//   - replacing the file p.over describes, by exchanging the two files
//     (renameat2 RENAME_EXCHANGE) and comparing what came out with
//     p.over: the same file (device and inode), of the same type, mode,
//     size and modification time. When it is not (a writer changed or
//     replaced the file after it was checked), the two are exchanged back
//     and errChanged returned; when the new file was itself written or
//     replaced meanwhile, what is at name is the writer's latest and
//     stays, and the version it superseded is dropped. Where the file
//     system cannot exchange, the file at name is checked again and
//     replaced by a rename, which leaves a window between the two.
func placeAt(dirfd int, dir, name, tmp string, p put) (err error) {
	target := filepath.Join(dir, name)
	keep := false // tmp holds what no one else has: never removed
	defer func() {
		if !keep {
			_ = unix.Unlinkat(dirfd, tmp, 0)
		}
	}()
	if p.blind {
		if err := unix.Renameat(dirfd, tmp, dirfd, name); err != nil {
			return &fs.PathError{Op: "rename", Path: target, Err: err}
		}
		return nil
	}
	p.before()
	if p.over == nil {
		err := renameNoReplace(dirfd, tmp, name)
		if errors.Is(err, unix.EEXIST) {
			return errExists
		}
		if err != nil {
			return &fs.PathError{Op: "rename", Path: target, Err: err}
		}
		return nil
	}
	var ours unix.Stat_t
	if err := unix.Fstatat(dirfd, tmp, &ours, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "stat", Path: filepath.Join(dir, tmp), Err: err}
	}
	err = exchange(dirfd, tmp, name)
	switch {
	case errors.Is(err, unix.ENOENT):
		return errChanged // removed since it was checked
	case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP):
		// The file system cannot exchange: the check again, then a
		// rename over the file; a write between the two is lost.
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || !sameStat(&st, p.over) {
			return errChanged
		}
		if err := unix.Renameat(dirfd, tmp, dirfd, name); err != nil {
			return &fs.PathError{Op: "rename", Path: target, Err: err}
		}
		return nil
	case err != nil:
		return &fs.PathError{Op: "exchange", Path: target, Err: err}
	}
	var was unix.Stat_t
	if unix.Fstatat(dirfd, tmp, &was, unix.AT_SYMLINK_NOFOLLOW) == nil && sameStat(&was, p.over) {
		return nil // what was checked, now at tmp: removed
	}
	// Not what was checked: the writer's version goes back in place,
	// unless the new file was written or replaced since the exchange.
	var now unix.Stat_t
	if unix.Fstatat(dirfd, name, &now, unix.AT_SYMLINK_NOFOLLOW) != nil || !sameStat(&now, &ours) {
		return errChanged
	}
	if err := exchange(dirfd, tmp, name); err != nil {
		if err := unix.Renameat(dirfd, tmp, dirfd, name); err != nil {
			keep = true
			return fmt.Errorf("cannot put %s back: it is at %s: %w", target, filepath.Join(dir, tmp), err)
		}
	}
	return errChanged
}

// errGone is returned by unlinkChecked when nothing is at the name any more:
// removed since it was checked.
var errGone = errors.New("gone meanwhile")

// unlinkChecked removes the entry name of dirfd, whose path is dir, if it is
// still the one p.over describes (checked by the caller): the same file
// (device and inode), of the same type, mode, size and modification time.
// A removal is made as checked as a replacement (placeAt): the entry is
// first renamed aside to tmp in the same directory, replacing nothing
// (renameat2 RENAME_NOREPLACE), and what was moved is compared with
// p.over; only then is it unlinked. When it is not what was checked (a
// writer changed or replaced it after the check), it is renamed back,
// again replacing nothing, and errChanged returned; when something new
// took its name meanwhile, that stays, and the moved entry is handed to
// displaced, which saves it elsewhere and returns where (the path is
// returned with errChanged). Nothing at the name is errGone. Where the
// file system cannot rename without replacing, the entry is checked again
// and unlinked, which leaves a window between the two.
func unlinkChecked(dirfd int, dir, name, tmp string, p put, displaced func(dirfd int, tmp string) (string, error)) (saved string, err error) {
	target := filepath.Join(dir, name)
	unlinkTemp(dirfd, tmp) // left by a killed sync
	p.before()
	err = renameAside(dirfd, name, tmp)
	switch {
	case errors.Is(err, unix.ENOENT):
		return "", errGone
	case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP):
		// The file system cannot rename without replacing: the check
		// again, then the removal; a write between the two is lost.
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				return "", errGone
			}
			return "", &fs.PathError{Op: "lstat", Path: target, Err: err}
		}
		if !sameStat(&st, p.over) {
			return "", errChanged
		}
		if err := unix.Unlinkat(dirfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return "", &fs.PathError{Op: "remove", Path: target, Err: err}
		}
		return "", nil
	case err != nil:
		return "", &fs.PathError{Op: "rename", Path: target, Err: err}
	}
	hook("aside")
	var was unix.Stat_t
	if unix.Fstatat(dirfd, tmp, &was, unix.AT_SYMLINK_NOFOLLOW) == nil && sameStat(&was, p.over) {
		if err := unix.Unlinkat(dirfd, tmp, 0); err != nil {
			if renameNoReplace(dirfd, tmp, name) != nil {
				return "", fmt.Errorf("cannot remove %s, and cannot put it back: it is at %s: %w", target, filepath.Join(dir, tmp), err)
			}
			return "", &fs.PathError{Op: "remove", Path: target, Err: err}
		}
		return "", nil
	}
	// Not what was checked: it goes back in place, unless something new
	// took the name meanwhile.
	err = renameNoReplace(dirfd, tmp, name)
	if err == nil {
		return "", errChanged
	}
	if errors.Is(err, unix.EEXIST) && displaced != nil {
		saved, serr := displaced(dirfd, tmp)
		if serr == nil {
			_ = unix.Unlinkat(dirfd, tmp, 0)
			return saved, errChanged
		}
		err = serr
	}
	return "", fmt.Errorf("cannot put %s back: it is at %s: %w", target, filepath.Join(dir, tmp), err)
}

// exchange swaps the names a and b of dirfd (a variable for tests, which
// stand for a file system that cannot).
var exchange = exchangeAt

// sameStat reports whether a and b are the stat of the same file, of the
// same type, mode, size and modification time. The change time is left
// out: exchanging two files sets it.
func sameStat(a, b *unix.Stat_t) bool {
	return a.Dev == b.Dev && a.Ino == b.Ino && a.Mode == b.Mode && a.Size == b.Size && a.Mtim == b.Mtim
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
