package mount

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Dir is a directory to materialize in the sandbox (a persona's skill):
// Rel, relative to the tree in slash form, and its files.
type Dir struct {
	Rel   string
	Files []DirFile
}

// DirFile is a file of a Dir: its slash path in the directory, its
// content, and whether it is executable.
type DirFile struct {
	Path string
	Data []byte
	Exec bool
}

// MaterializeDir writes d into the sandbox's tree, as Materialize writes
// an instruction file: no symlink is followed on the way (the directories
// are made as needed; a link or a file in the place of one is an error),
// what is in the place of a file is replaced, never written through; it
// never syncs back, and git in the sandbox does not see it (its directory
// is in the info/exclude of the nearest repository). Whatever the agent
// adds in the directory does not sync back either: sync-back reports it
// as not synced. It returns the directory's path.
func (s *Sandbox) MaterializeDir(d Dir) (string, error) {
	if err := checkRel(d.Rel); err != nil {
		return "", err
	}
	abs := filepath.Join(s.Tree, filepath.FromSlash(d.Rel))
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("cannot write %s into the sandbox: %w", d.Rel, err)
	}
	root, err := unix.Open(s.Tree, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	defer unix.Close(root)
	top, err := mkdirsAt(root, d.Rel)
	if err != nil {
		return fail(err)
	}
	defer unix.Close(top)
	for _, f := range d.Files {
		if err := checkRel(f.Path); err != nil {
			return fail(err)
		}
		dir, name := path.Split(f.Path)
		dfd := top
		if dir != "" {
			if dfd, err = mkdirsAt(top, strings.TrimSuffix(dir, "/")); err != nil {
				return fail(err)
			}
		}
		err := writeDirFile(dfd, name, f)
		if dfd != top {
			unix.Close(dfd)
		}
		if err != nil {
			return fail(fmt.Errorf("%s: %w", f.Path, err))
		}
		s.materialize[path.Join(d.Rel, f.Path)] = true
	}
	// What the agent adds there does not sync back either.
	if plainPattern(d.Rel) {
		r := s.rules
		ign := append(append([]string(nil), r.ignLines...), "/"+d.Rel+"/")
		s.rules = rulesFrom(ign, r.roLines, r.hide, r.hidePaths)
		// git in the sandbox does not see it: the nearest repository
		// excludes it.
		if gitdir, top := nearestGitDir(s.Tree, abs); gitdir != "" {
			if err := os.MkdirAll(filepath.Join(gitdir, "info"), 0o755); err == nil {
				f, err := os.OpenFile(filepath.Join(gitdir, "info", "exclude"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				if err == nil {
					fmt.Fprintf(f, "\n/%s/\n", relSlash(top, abs))
					f.Close()
				}
			}
		}
	}
	return abs, nil
}

// checkRel checks a slash path relative to the tree: clean, not empty,
// not absolute, no "..".
func checkRel(rel string) error {
	if rel == "" || rel == "." || strings.HasPrefix(rel, "/") || path.Clean(rel) != rel || strings.ContainsRune(rel, 0) {
		return fmt.Errorf("%q is not a clean relative path", rel)
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == ".." {
			return fmt.Errorf("%q leaves the sandbox", rel)
		}
	}
	return nil
}

// plainPattern reports whether rel, as "/rel/", is a gitignore pattern
// matching rel alone: it holds no character gitignore gives a meaning to.
func plainPattern(rel string) bool {
	return !strings.ContainsAny(rel, "*?[]\\!#\n") && strings.TrimSpace(rel) == rel
}

// mkdirsAt opens the directory rel below the directory dirfd, making the
// directories that are missing, following no symlink.
func mkdirsAt(dirfd int, rel string) (int, error) {
	fd, err := unix.Openat(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for _, seg := range strings.Split(rel, "/") {
		next, err := unix.Openat(fd, seg, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			if err = unix.Mkdirat(fd, seg, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = unix.Openat(fd, seg, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			}
		}
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			err = fmt.Errorf("%s is a symlink or not a directory", seg)
		}
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// writeDirFile writes f as name in the directory dirfd: a new file, whatever
// was there (but a directory) removed first.
func writeDirFile(dirfd int, name string, f DirFile) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
		if err := unix.Unlinkat(dirfd, name, 0); err != nil {
			return err
		}
	}
	mode := uint32(0o644)
	if f.Exec {
		mode = 0o755
	}
	fd, err := unix.Openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err != nil {
		return err
	}
	file := os.NewFile(uintptr(fd), name)
	_, err = file.Write(f.Data)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// The mode as asked, whatever the umask.
		err = unix.Fchmodat(dirfd, name, mode, 0)
	}
	return err
}
