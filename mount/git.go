package mount

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/otiai10/copy"

	"github.com/seed-3bc194a6/workforce/internal/git"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
)

// The sandbox's git shares the real repository's objects instead of
// copying them, so that a sandbox costs the same whatever the length of
// the history: the object stores of every git directory in the project
// (.git/objects, .git/modules/*/objects of submodules, sub/.git/objects
// of nested repositories) are not copied; the sandbox's stores are empty
// and name the real ones in objects/info/alternates, so git log, diff and
// commit work, and the objects the agent writes stay in the sandbox. Large
// per-clone caches that git can do without are left out too (lfs, the
// admin directories of linked worktrees).
//
// No git directory in the sandbox may lead git to the real repository. A
// .git file ("gitdir: PATH": a linked worktree, a submodule checkout) or a
// .git symlink, at any depth, would point git in the sandbox at the real
// repository's index and refs, unless it names, by a relative path, a git
// directory that the copy brought into the sandbox (a submodule's
// .git/modules/NAME): that one is kept as it is. Any other gets a .git
// directory of its own instead (ownGitDir): HEAD and index of the
// worktree, config, refs and info of the repository, and the repository's
// objects as alternates. A copied git directory whose config names its
// work tree (core.worktree) by an absolute path inside the project is
// pointed at the same place in the sandbox. Nothing below a .git, at any
// depth, is in the manifest or flows back.
//
// A git directory may lie in the project under another name: the one a
// .git file or link names ("gitdir: ./.bare", the layout of a bare
// repository with worktrees; git init --separate-git-dir=./gitdata), and
// a linked worktree's common directory. Each such directory (gitDirs) is
// a git directory everywhere .git is: copied but for its objects and
// caches, never in the manifest, never walked by sync-back or live sync,
// never synced back nor listed as a change. A .git file naming it keeps
// naming it in the sandbox (by a relative path, made so when the real one
// is absolute), so that git there, and the agent's commits, work as with
// a .git directory.

// gitInner reports whether rel (slashes, relative to the project root)
// lies below a directory named .git, at any depth, and returns its path
// relative to the first such directory.
func gitInner(rel string) (string, bool) {
	for {
		i := strings.Index(rel, ".git/")
		if i < 0 {
			return "", false
		}
		if i == 0 || rel[i-1] == '/' {
			return rel[i+len(".git/"):], true
		}
		rel = rel[i+len(".git/"):]
	}
}

// isDotGit reports whether rel names an entry called .git, at any depth.
func isDotGit(rel string) bool { return rel == ".git" || strings.HasSuffix(rel, "/.git") }

// inGit reports whether rel is a .git entry or lies below one.
func inGit(rel string) bool {
	_, in := gitInner(rel)
	return in || isDotGit(rel)
}

// gitDirs are the git directories of a project that lie inside it under
// another name than .git (see above): paths relative to the root, with
// slashes, sorted, none below another nor below a .git.
type gitDirs []string

// inner reports whether rel is one of g or lies below one, and returns
// its path relative to that directory ("" for the directory itself).
func (g gitDirs) inner(rel string) (string, bool) {
	for _, d := range g {
		if rel == d {
			return "", true
		}
		if strings.HasPrefix(rel, d) && len(rel) > len(d) && rel[len(d)] == '/' {
			return rel[len(d)+1:], true
		}
	}
	return "", false
}

// add adds the directories dirs to g, dropping any below another.
func (g gitDirs) add(dirs ...string) gitDirs {
	all := append(append([]string(nil), g...), dirs...)
	sort.Strings(all)
	out := all[:0]
	for _, d := range all {
		if n := len(out); n > 0 && (d == out[n-1] || strings.HasPrefix(d, out[n-1]+"/")) {
			continue
		}
		out = append(out, d)
	}
	return gitDirs(out)
}

// gitInner is the package's gitInner with g: rel lies below a .git
// directory, or below one of g (the directory itself is not below).
func (g gitDirs) gitInner(rel string) (string, bool) {
	if in, ok := gitInner(rel); ok {
		return in, true
	}
	if in, ok := g.inner(rel); ok && in != "" {
		return in, true
	}
	return "", false
}

// isGitDir reports whether rel is an entry called .git, or one of g.
func (g gitDirs) isGitDir(rel string) bool {
	if isDotGit(rel) {
		return true
	}
	in, ok := g.inner(rel)
	return ok && in == ""
}

// inGit reports whether rel is a .git entry or one of g, or lies below
// one: a path never synced.
func (g gitDirs) inGit(rel string) bool {
	_, ok := g.inner(rel)
	return ok || inGit(rel)
}

// isGitDir reports whether the path rel of the sandbox is an entry called
// .git or a git directory under another name (gitDirs.isGitDir): walks of
// the sandbox do not enter it.
func (s *Sandbox) isGitDir(rel string) bool { return s.gitDirs.isGitDir(rel) }

// inGit reports whether the path rel of the sandbox is a git directory
// or lies in one (gitDirs.inGit): a path never synced.
func (s *Sandbox) inGit(rel string) bool { return s.gitDirs.inGit(rel) }

// namedGitDirs returns the git directories the .git file or link dotgit
// (relRoot: its directory, relative to the root, "" for the root) names,
// the git directory and its common directory, that lie inside the project
// root under another name than .git: paths relative to the root, with
// slashes. A directory counts only when it has a HEAD file (a linked
// worktree's common directory: HEAD or objects), never the root itself
// nor a directory above the .git.
func namedGitDirs(root, dotgit string) []string {
	fi, err := os.Lstat(dotgit)
	if err != nil {
		return nil
	}
	var gitdir, common string
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		gitdir, common, err = gitdirOfLink(dotgit)
	case fi.Mode().IsRegular():
		gitdir, common, err = gitdirOf(dotgit)
	default:
		return nil
	}
	if err != nil {
		return nil
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		realRoot = root
	}
	top, in := pathutil.Rel(root, filepath.Dir(dotgit))
	if !in {
		return nil
	}
	top = filepath.ToSlash(top)
	var out []string
	for _, dir := range []string{gitdir, common} {
		rel, in := pathutil.Rel(root, filepath.Clean(dir))
		if !in {
			resolved, err := filepath.EvalSymlinks(dir)
			if err != nil {
				continue
			}
			if rel, in = pathutil.Rel(realRoot, resolved); !in {
				continue
			}
		}
		rel = filepath.ToSlash(rel)
		if rel == "." || inGit(rel) {
			continue
		}
		if top != "." && (top == rel || strings.HasPrefix(top, rel+"/")) {
			continue // the .git's own directory, or one above it
		}
		head, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel), "HEAD"))
		isGit := err == nil && head.Mode().IsRegular()
		if !isGit && dir == common {
			obj, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel), "objects"))
			isGit = err == nil && obj.IsDir()
		}
		if isGit {
			out = append(out, rel)
		}
	}
	return out
}

// projectGitDirs returns the git directories under another name that the
// .git file or link at the project root names (namedGitDirs): known before
// the copy, so that it leaves their objects out as it does .git's. Those a
// nested .git names are found as the copy meets them.
func projectGitDirs(root string) gitDirs {
	return gitDirs(nil).add(namedGitDirs(root, filepath.Join(root, ".git"))...)
}

// gitSkip reports whether the copy leaves out src, whose path relative
// to the git directory holding it is inner, because it is a git object
// store or cache; a store is remembered in alternates.
func gitSkip(inner, src string, isDir bool) (skip, store bool) {
	if !isDir {
		return false, false
	}
	switch inner {
	case "lfs", "worktrees":
		return true, false
	}
	if filepath.Base(inner) == "objects" {
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

// sealGitFiles gives each .git file or link of the project (dotgits:
// paths relative to root, with slashes) its place in the sandbox tree: see
// the comment at the top of this file. A nested one whose git directory
// cannot be made (a dangling gitdir) is left out, and returned, so that
// git there finds the enclosing sandbox repository; the root's is an
// error.
func sealGitFiles(root, tree string, dotgits []string) (left []string, err error) {
	sort.Strings(dotgits)
	for _, rel := range dotgits {
		real := filepath.Join(root, filepath.FromSlash(rel))
		box := filepath.Join(tree, filepath.FromSlash(rel))
		if data, ok := innerGitFile(root, real, tree, box); ok {
			if err := os.WriteFile(box, data, 0o644); err != nil {
				return left, fmt.Errorf("cannot give the sandbox a git directory: %w", err)
			}
			continue
		}
		if err := ownGitDir(real, box); err != nil {
			if rel == ".git" {
				return left, err
			}
			if err := removeAll(box); err != nil {
				return left, err
			}
			left = append(left, rel)
		}
	}
	return left, nil
}

// innerGitFile returns the bytes of the .git file real when it names a
// git directory that the copy brought into the sandbox tree (box being
// the file's place there), whose common directory is in the tree too:
// such a file leads git to the sandbox only. A relative path is kept as
// it is; an absolute one inside the project root (git init
// --separate-git-dir) is made the relative path to the same place in the
// tree.
func innerGitFile(root, real, tree, box string) ([]byte, bool) {
	if fi, err := os.Lstat(real); err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	data, err := os.ReadFile(real)
	if err != nil {
		return nil, false
	}
	line, _, _ := strings.Cut(string(data), "\n")
	path, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	path = strings.TrimSpace(path)
	if !ok || path == "" {
		return nil, false
	}
	if filepath.IsAbs(path) {
		rel, in := pathutil.Rel(root, filepath.Clean(path))
		if !in {
			resolvedRoot, err1 := filepath.EvalSymlinks(root)
			resolved, err2 := filepath.EvalSymlinks(path)
			if err1 != nil || err2 != nil {
				return nil, false
			}
			if rel, in = pathutil.Rel(resolvedRoot, resolved); !in {
				return nil, false
			}
		}
		if path, err = filepath.Rel(filepath.Dir(box), filepath.Join(tree, rel)); err != nil {
			return nil, false
		}
		data = []byte("gitdir: " + filepath.ToSlash(path) + "\n")
	}
	inTree := func(p string) (string, bool) {
		if _, in := pathutil.Rel(tree, filepath.Clean(p)); !in {
			return "", false
		}
		resolved, err := filepath.EvalSymlinks(p)
		if err != nil {
			return "", false
		}
		_, in := pathutil.Rel(tree, resolved)
		return resolved, in
	}
	gitdir, ok := inTree(filepath.Join(filepath.Dir(box), path))
	if !ok {
		return nil, false
	}
	if fi, err := os.Lstat(filepath.Join(gitdir, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	if c, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if filepath.IsAbs(common) {
			return nil, false
		}
		if _, ok := inTree(filepath.Join(gitdir, common)); !ok {
			return nil, false
		}
	}
	return data, true
}

// sealGitLinks puts in the sandbox tree, in the place of each link of a
// git directory that leads out of the project (links: path relative to
// the tree, to where it leads), a copy of what it leads to, links in it
// followed; an object store is shared by alternates instead, and a cache
// git can do without (lfs, the admin directories of linked worktrees) is
// left out.
func sealGitLinks(tree string, links map[string]string) error {
	rels := make([]string, 0, len(links))
	for rel := range links {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		real := links[rel]
		inner, _ := gitInner(rel)
		box := filepath.Join(tree, filepath.FromSlash(rel))
		fi, err := os.Stat(real)
		if err != nil {
			continue // dangling: nothing to copy
		}
		switch {
		case inner == "lfs" || inner == "worktrees":
			continue
		case path.Base(inner) == "objects" && fi.IsDir():
			if err := shareObjects(map[string]string{box: real}); err != nil {
				return err
			}
			continue
		}
		opt := copy.Options{
			PreserveTimes:     true,
			PermissionControl: copy.PerservePermission,
			OnSymlink:         func(string) copy.SymlinkAction { return copy.Deep },
		}
		if err := copy.Copy(real, box, opt); err != nil {
			return fmt.Errorf("cannot give the sandbox a git directory of its own (%s): %w", rel, err)
		}
	}
	return nil
}

// sealWorktrees points each copied git directory (gitdirs, in the sandbox)
// whose config names its work tree by an absolute path inside the project
// at the same place in the sandbox.
func sealWorktrees(root, tree string, gitdirs []string) error {
	for _, dir := range gitdirs {
		cfg := filepath.Join(dir, "config")
		data, err := os.ReadFile(cfg)
		if err != nil || !bytes.Contains(bytes.ToLower(data), []byte("worktree")) {
			continue
		}
		// --file reads that file alone: no include is followed.
		out, err := gitRun("", nil, "config", "--file", cfg, "--get", "core.worktree")
		if err != nil {
			continue // not set, or no git: nothing git would follow here
		}
		wt := strings.TrimSpace(string(out))
		if !filepath.IsAbs(wt) {
			continue // relative to the git directory: the same place in the sandbox
		}
		rel, in := pathutil.Rel(root, filepath.Clean(wt))
		if !in {
			if real, err := resolvePrefix(wt); err == nil {
				rel, in = pathutil.Rel(root, real)
			}
		}
		if !in {
			continue
		}
		if _, err := gitRun("", nil, "config", "--file", cfg, "core.worktree", filepath.Join(tree, rel)); err != nil {
			return fmt.Errorf("cannot point the sandbox's git at the sandbox (%s): %w", cfg, err)
		}
	}
	return nil
}

// ownGitDir makes box, in the sandbox, a git directory of its own for the
// project's .git file or symlink dotgit: see the comment at the top of
// this file.
func ownGitDir(dotgit, box string) error {
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
	if cfg := filepath.Join(box, "config"); git.Installed() {
		if _, err := os.Stat(cfg); err == nil {
			if _, err := gitRun("", nil, "config", "--file", cfg, "--unset", "core.worktree"); err != nil && git.ExitCode(err) != 5 { // 5: not set
				return fmt.Errorf("git config in the sandbox: %w", err)
			}
		}
	}
	return nil
}

// nearestGitDir returns the git directory of the repository that holds
// dir in the sandbox tree, and that repository's top directory; empty
// when there is none inside the tree.
func nearestGitDir(tree, dir string) (gitdir, top string) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, in := pathutil.Rel(tree, d); !in {
			return "", ""
		}
		dotgit := filepath.Join(d, ".git")
		if fi, err := os.Lstat(dotgit); err == nil {
			switch {
			case fi.IsDir():
				return dotgit, d
			case fi.Mode().IsRegular():
				if g, _, err := gitdirOf(dotgit); err == nil {
					if _, in := pathutil.Rel(tree, g); in {
						return g, d
					}
				}
				return "", ""
			}
		}
		if d == tree {
			return "", ""
		}
	}
}

// The sandbox's commits. Git in the sandbox runs under the policy of
// internal/git for a repository workforce does not trust (the agent wrote
// it): nothing its configuration names runs, and no command that reads the
// working tree (status, diff against it) is asked. The commit the
// sandbox's HEAD named when it was made (GitStart) and the one it names
// now (Head) are where the agent's commits start and end; bringing them
// into the real repository as a branch is package session's.

// gitRun runs git in dir, a directory of the sandbox (or "" for none),
// with stdin, under the policy for a repository workforce does not trust,
// and returns its standard output.
func gitRun(dir string, stdin []byte, args ...string) ([]byte, error) {
	return git.Repo{Dir: dir}.Run(context.Background(), stdin, args...)
}

// Head returns the commit the sandbox's HEAD names now; empty without a
// repository of the sandbox's own, a commit, or git, or when HEAD cannot
// be read (ReadHead says why).
func (s *Sandbox) Head() string {
	h, _ := s.ReadHead()
	return h
}

// ReadHead returns the commit the sandbox's HEAD names now, as Head, and
// an error when HEAD cannot be read: HEAD, its branch's ref or
// packed-refs is not a regular file (a FIFO the agent made would block
// git), or git failed.
func (s *Sandbox) ReadHead() (string, error) {
	if s.Overlay != nil {
		return s.overlayHead()
	}
	gitDir, _ := s.gitDir()
	if gitDir == "" {
		return "", nil
	}
	h, ok, err := readHead(gitDir)
	if err != nil {
		return "", fmt.Errorf("cannot read the sandbox's HEAD: %w", err)
	}
	if ok {
		return h, nil
	}
	out, err := gitRun(s.Tree, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		if git.ExitCode(err) == 1 {
			return "", nil // no commit
		}
		return "", fmt.Errorf("cannot read the sandbox's HEAD: %w", err)
	}
	if h := strings.TrimSpace(string(out)); git.IsObjectName(h) {
		return h, nil
	}
	return "", nil
}

// CommittedInSandbox returns the commits that git itself recorded in the
// sandbox's HEAD log as made there (a "commit" entry: commit, amend,
// merge, initial) and that the real repository's HEAD log does not hold
// (the copy brought the real log's lines along): what tells an identical
// commit the agent made again from a HEAD moved to an old one, when the
// real repository still holds the object. The log is the agent's to
// write, so this is a report, never a permission. Nothing read blocks: a
// log that is not a regular file is read as empty.
func (s *Sandbox) CommittedInSandbox() map[string]bool {
	out := map[string]bool{}
	if s.Overlay != nil {
		return s.overlayCommitted()
	}
	gitDir, _ := s.gitDir()
	if gitDir == "" {
		return out
	}
	realLog := ""
	if rel, ok := pathutil.Rel(s.Tree, gitDir); ok {
		realLog = filepath.Join(s.Root, rel, "logs", "HEAD")
	}
	return committedIn(filepath.Join(gitDir, "logs", "HEAD"), realLog)
}

// committedIn returns the commits the HEAD log agentLog records as made
// (CommittedInSandbox) that the real HEAD log realLog ("" for none) does
// not hold.
func committedIn(agentLog, realLog string) map[string]bool {
	out := map[string]bool{}
	real := map[string]bool{}
	if realLog != "" {
		for _, line := range readLog(realLog) {
			real[line] = true
		}
	}
	for _, line := range readLog(agentLog) {
		head, msg, ok := strings.Cut(line, "\t")
		fields := strings.Fields(head)
		if !ok || real[line] || len(fields) < 2 || !strings.HasPrefix(msg, "commit") {
			continue
		}
		if git.IsObjectName(fields[1]) {
			out[fields[1]] = true
		}
	}
	return out
}

// readLog returns the lines of the reflog file path; none when it is not
// a regular file or cannot be read.
func readLog(path string) []string {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, 16<<20))
	if err != nil {
		return nil
	}
	return strings.Split(string(data), "\n")
}

// GitObjects returns the object store of the sandbox's own repository,
// where git writes the agent's objects; empty without one. In an overlay
// sandbox it is the upper layer's .git/objects, which holds the agent's
// new objects only (the real repository's store is the rest of what git
// saw there), and may not exist.
func (s *Sandbox) GitObjects() string {
	if s.Overlay != nil {
		if !s.overlayGit() {
			return ""
		}
		return filepath.Join(s.Overlay.Upper, ".git", "objects")
	}
	_, common := s.gitDir()
	if common == "" {
		return ""
	}
	return filepath.Join(common, "objects")
}

// gitDir returns the git directory of the sandbox's own repository at the
// top of the tree, and its common directory: .git, or the directory inside
// the tree that a .git file names (a git directory under another name);
// empty when there is none, or when a .git file leads out of the tree.
// Nothing read blocks: what is not a regular file or a directory where
// one should be is no repository.
func (s *Sandbox) gitDir() (gitdir, common string) {
	dotgit := filepath.Join(s.Tree, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case err != nil:
		return "", ""
	case fi.IsDir():
		gitdir = dotgit
	case fi.Mode().IsRegular():
		data, err := readRegular(dotgit)
		if err != nil {
			return "", ""
		}
		line, _, _ := strings.Cut(string(data), "\n")
		p, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if p = strings.TrimSpace(p); !ok || p == "" {
			return "", ""
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.Tree, p)
		}
		if gitdir, ok = s.inTree(p); !ok {
			return "", ""
		}
	default:
		return "", ""
	}
	common = gitdir
	if c, err := readRegular(filepath.Join(gitdir, "commondir")); err == nil {
		p := strings.TrimSpace(string(c))
		if !filepath.IsAbs(p) {
			p = filepath.Join(gitdir, p)
		}
		var ok bool
		if common, ok = s.inTree(p); !ok {
			return "", ""
		}
	}
	if fi, err := os.Lstat(gitdir); err != nil || !fi.IsDir() {
		return "", ""
	}
	return gitdir, common
}

// inTree returns the path p with its links resolved, when it lies inside
// the sandbox tree.
func (s *Sandbox) inTree(p string) (string, bool) {
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	tree, err := filepath.EvalSymlinks(s.Tree)
	if err != nil {
		return "", false
	}
	if _, in := pathutil.Rel(tree, resolved); !in {
		return "", false
	}
	return resolved, true
}

// readRegular reads the regular file p, following no link and never
// blocking (on a FIFO at that name).
func readRegular(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	return io.ReadAll(io.LimitReader(f, 1<<20))
}

// readHead resolves HEAD from the files of the git directory gitDir, as
// `git rev-parse --verify HEAD^{commit}` does for the common layouts,
// without starting git (every run asks, before the harness starts): HEAD
// naming a commit, or a branch whose ref is a loose file or a line of
// packed-refs; no HEAD file, or a branch with no commit yet, is no commit.
// ok is false for what git is asked about: a reftable repository, a
// linked worktree's common directory, a symbolic ref, or a link to a
// regular file where a file should be. What is neither a regular file
// nor a link to one where git reads HEAD, the ref or packed-refs (a FIFO,
// whose read would block git, a directory, a dangling link) is an error,
// and git is not asked. The name is taken to be a commit's.
func readHead(gitDir string) (string, bool, error) {
	return readHeadBy(func(name string) string { return filepath.Join(gitDir, filepath.FromSlash(name)) })
}

// readHeadBy is readHead, the git directory's files, by their slash
// names, where at says (a path that does not exist for none).
func readHeadBy(at func(name string) string) (string, bool, error) {
	regular := func(name string) ([]byte, bool, bool, error) { // data, exists, ok
		p := at(name)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, true, nil
		}
		if err != nil {
			return nil, false, false, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				return nil, true, false, nil // git reads it
			}
			return nil, true, false, fmt.Errorf("%s is a link to what is not a regular file", name)
		}
		if !fi.Mode().IsRegular() {
			return nil, true, false, fmt.Errorf("%s is not a regular file", name)
		}
		// Non-blocking: what is a file now may be a FIFO by the time
		// it is opened.
		f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return nil, true, false, err
		}
		defer f.Close()
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			return nil, true, false, fmt.Errorf("%s is not a regular file", name)
		}
		data, err := io.ReadAll(io.LimitReader(f, 1<<30))
		return data, true, err == nil, err
	}
	if _, exists, ok, err := regular("commondir"); err != nil || exists || !ok {
		return "", false, err
	}
	head, exists, ok, err := regular("HEAD")
	if err != nil || !ok {
		return "", false, err
	}
	if !exists {
		return "", true, nil // not a repository: git finds no HEAD either
	}
	line := strings.TrimSpace(string(head))
	if git.IsObjectName(line) {
		return line, true, nil
	}
	ref, found := strings.CutPrefix(line, "ref: ")
	if !found || !strings.HasPrefix(ref, "refs/heads/") || ref == "refs/heads/.invalid" || strings.Contains(ref, "..") {
		return "", false, nil
	}
	loose, exists, ok, err := regular(ref)
	if err != nil || !ok {
		return "", false, err
	}
	if exists {
		if h := strings.TrimSpace(string(loose)); git.IsObjectName(h) {
			return h, true, nil
		}
		return "", false, nil
	}
	packed, exists, ok, err := regular("packed-refs")
	if err != nil || !ok {
		return "", false, err
	}
	if exists {
		for _, l := range strings.Split(string(packed), "\n") {
			if h, name, ok := strings.Cut(l, " "); ok && name == ref && git.IsObjectName(h) {
				return h, true, nil
			}
		}
	}
	return "", true, nil // a branch with no commit yet
}

// GitStart returns the commit the sandbox's HEAD named when it was made;
// empty when the project has no repository or no commit.
func (s *Sandbox) GitStart() string { return s.gitStart }
