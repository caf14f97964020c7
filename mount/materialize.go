package mount

// Materializing: files written into the sandbox that are the sandbox's
// alone. They never sync back, and git in the sandbox does not see them:
// the instruction file (Materialize) and directories of files
// (MaterializeDir, for the skills package skill plans). What they hold,
// and where they go, is the caller's.

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Materialize writes an instruction file into the sandbox's working
// directory. It never syncs back, and git in the sandbox does not see it.
// It returns the file's path in the tree, as the harness sees it (in an
// overlay sandbox, the file is in the upper layer: AgentPath).
func (s *Sandbox) Materialize(name, text string) (string, error) {
	treePath := filepath.Join(s.Workdir, name)
	rel := relSlash(s.Tree, treePath)
	// In an overlay sandbox, the file goes into the upper layer, at its
	// place in the tree: the merged tree shows it, over the real one.
	path := filepath.Join(s.writeRoot(), filepath.FromSlash(rel))
	if s.Overlay != nil {
		if err := s.upperDirs(relSlash(s.Tree, s.Workdir)); err != nil {
			return "", fmt.Errorf("cannot write %s into the sandbox: %w", name, err)
		}
	}
	// Never write through what is there: a symlink at that name could
	// lead out of the sandbox.
	if fi, err := os.Lstat(path); err == nil && !fi.IsDir() {
		if err := os.Remove(path); err != nil {
			return "", fmt.Errorf("cannot write %s into the sandbox: %w", name, err)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return "", fmt.Errorf("cannot write %s into the sandbox: %w", name, err)
	}
	s.materialize[rel] = true
	s.dropWhiteout(rel)
	s.hideFromGit(s.Workdir, treePath, false)
	return treePath, nil
}

// Dir is a directory to materialize in the sandbox (a persona's skill,
// as package skill plans it): Rel, relative to the tree in slash form, and
// its files.
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
	if s.Overlay != nil {
		if err := s.upperDirs(d.Rel); err != nil {
			return fail(err)
		}
		for _, f := range d.Files {
			if dir := path.Dir(f.Path); dir != "." && checkRel(f.Path) == nil {
				if err := s.upperDirs(path.Join(d.Rel, dir)); err != nil {
					return fail(err)
				}
			}
		}
	}
	root, err := unix.Open(s.writeRoot(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
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
		s.dropWhiteout(path.Join(d.Rel, f.Path))
	}
	// What the agent adds there does not sync back either.
	if plainPattern(d.Rel) {
		r := s.rules
		ign := append(append([]string(nil), r.ignLines...), "/"+d.Rel+"/")
		s.rules = rulesFrom(ign, r.roLines, r.hide, r.hidePaths)
		s.hideFromGit(abs, abs, true)
	}
	return abs, nil
}

// hideFromGit lists path, a file or, with dir, a directory of the sandbox,
// in the info/exclude of the repository nearest to the directory from in
// the sandbox, so that git there does not see it. Without such a
// repository, or when the file cannot be written, it does nothing: git
// then shows the path, which still never syncs back.
func (s *Sandbox) hideFromGit(from, path string, dir bool) {
	gitdir, top := nearestGitDir(s.Tree, from)
	if s.Overlay != nil {
		gitdir, top = s.upperGitDir(from)
	}
	if gitdir == "" {
		return
	}
	if err := os.MkdirAll(filepath.Join(gitdir, "info"), 0o755); err != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(gitdir, "info", "exclude"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	pattern := "/" + relSlash(top, path)
	if dir {
		pattern += "/"
	}
	fmt.Fprintf(f, "\n%s\n", pattern)
	f.Close()
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

// upperGitDir returns, for an overlay sandbox, the git directory nearest
// to the directory from of the tree, in the upper layer (made there, with
// the real one's info/exclude, so that workforce's lines add to the
// user's), and the top of its work tree in the tree; empty when the real
// tree has none there.
func (s *Sandbox) upperGitDir(from string) (gitdir, top string) {
	realGit, realTop := nearestGitDir(s.Root, filepath.Join(s.Root, relSlash(s.Tree, from)))
	if realGit == "" {
		return "", ""
	}
	rel := relSlash(s.Root, realGit)
	if err := s.upperDirs(path.Join(rel, "info")); err != nil {
		return "", ""
	}
	gitdir = filepath.Join(s.Overlay.Upper, filepath.FromSlash(rel))
	exclude := filepath.Join(gitdir, "info", "exclude")
	if _, err := os.Lstat(exclude); errors.Is(err, os.ErrNotExist) {
		if data, err := os.ReadFile(filepath.Join(realGit, "info", "exclude")); err == nil {
			_ = os.WriteFile(exclude, data, 0o644)
		}
	}
	return gitdir, filepath.Join(s.Tree, filepath.FromSlash(relSlash(s.Root, realTop)))
}
