package mount

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/otiai10/copy"
)

// The sandbox's git shares the real repository's objects instead of
// copying them, so that a sandbox costs the same whatever the length of
// the history: the object stores of the repository (.git/objects, and
// .git/modules/*/objects of submodules) are not copied; the sandbox's
// stores are empty and name the real ones in objects/info/alternates, so
// git log, diff and commit work, and the objects the agent writes stay in
// the sandbox. Large per-clone caches that git can do without are left out
// too (.git/lfs, the admin directories of linked worktrees). When the
// project's .git is a file (a linked worktree or a submodule checkout) or a
// symlink, which would point git in the sandbox at the real repository's
// index and refs, the sandbox gets a .git directory of its own instead: HEAD and
// index of the worktree, config, refs and info of the repository, and the
// repository's objects as alternates.

// gitSkip reports whether the copy leaves out src (rel to the project
// root) because it is a git object store or cache; objects are remembered
// in alternates, as sandbox path to real path.
func gitSkip(rel, src string, isDir bool) (skip, store bool) {
	if !isDir || !strings.HasPrefix(rel, ".git/") {
		return false, false
	}
	switch rel {
	case ".git/lfs", ".git/worktrees":
		return true, false
	}
	if filepath.Base(rel) == "objects" {
		if fi, err := os.Stat(filepath.Join(filepath.Dir(src), "HEAD")); err == nil && fi.Mode().IsRegular() {
			return true, true
		}
	}
	return false, false
}

// shareObjects makes each object store left out of the copy an empty
// store whose alternates name the real one.
func shareObjects(stores map[string]string) error {
	for box, real := range stores {
		if err := os.MkdirAll(filepath.Join(box, "info"), 0o755); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(box, "pack"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(box, "info", "alternates"), []byte(real+"\n"), 0o644); err != nil {
			return fmt.Errorf("cannot share the repository's objects with the sandbox: %w", err)
		}
	}
	return nil
}

// gitdirOf reads a .git file ("gitdir: PATH") and returns the git
// directory it names, and the repository's common directory.
func gitdirOf(dotgit string) (gitdir, common string, err error) {
	data, err := os.ReadFile(dotgit)
	if err != nil {
		return "", "", err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	path, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return "", "", fmt.Errorf("%s is not a gitdir file", dotgit)
	}
	gitdir = strings.TrimSpace(path)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(filepath.Dir(dotgit), gitdir)
	}
	common = gitdir
	if c, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		common = strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitdir, common)
		}
	}
	return filepath.Clean(gitdir), filepath.Clean(common), nil
}

// gitdirOfLink returns the git directory a .git symlink leads to, and the
// repository's common directory.
func gitdirOfLink(dotgit string) (gitdir, common string, err error) {
	gitdir, err = filepath.EvalSymlinks(dotgit)
	if err != nil {
		return "", "", err
	}
	if fi, err := os.Stat(gitdir); err != nil || !fi.IsDir() {
		return "", "", fmt.Errorf("%s does not lead to a git directory", dotgit)
	}
	common = gitdir
	if c, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		common = strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitdir, common)
		}
	}
	return gitdir, filepath.Clean(common), nil
}

// ownGitDir gives the sandbox tree a .git directory of its own for the
// project's .git file or symlink dotgit: see the comment at the top of
// this file.
func ownGitDir(dotgit, tree string) error {
	fi, err := os.Lstat(dotgit)
	if err != nil {
		return err
	}
	var gitdir, common string
	if fi.Mode()&os.ModeSymlink != 0 {
		gitdir, common, err = gitdirOfLink(dotgit)
	} else {
		gitdir, common, err = gitdirOf(dotgit)
	}
	if err != nil {
		return err
	}
	box := filepath.Join(tree, ".git")
	if err := os.MkdirAll(box, 0o755); err != nil {
		return err
	}
	opt := copy.Options{
		PreserveTimes:     true,
		PermissionControl: copy.PerservePermission,
		OnSymlink:         func(string) copy.SymlinkAction { return copy.Shallow },
	}
	for _, part := range []struct{ from, name string }{
		{gitdir, "HEAD"}, {gitdir, "index"}, {common, "config"}, {common, "packed-refs"},
		{common, "refs"}, {common, "info"}, {common, "shallow"},
	} {
		src := filepath.Join(part.from, part.name)
		if _, err := os.Stat(src); err != nil {
			continue
		}
		if err := copy.Copy(src, filepath.Join(box, part.name), opt); err != nil {
			return fmt.Errorf("cannot give the sandbox a git directory: %w", err)
		}
	}
	if err := shareObjects(map[string]string{filepath.Join(box, "objects"): filepath.Join(common, "objects")}); err != nil {
		return err
	}
	// A submodule's config names its work tree relative to its git
	// directory; in the sandbox the work tree is where .git is.
	if _, err := exec.LookPath("git"); err == nil {
		cmd := exec.Command("git", "--git-dir", box, "config", "--unset", "core.worktree")
		cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 5 { // 5: not set
				return fmt.Errorf("git config in the sandbox: %v: %s", err, strings.TrimSpace(stderr.String()))
			}
		}
	}
	return nil
}
