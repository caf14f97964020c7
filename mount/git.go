package mount

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
		if data, ok := innerGitFile(real, tree, box); ok {
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

// innerGitFile returns the bytes of the .git file real when it names, by
// a relative path, a git directory that the copy brought into the sandbox
// tree (box being the file's place there), whose common directory is in
// the tree too: such a file leads git to the sandbox only.
func innerGitFile(real, tree, box string) ([]byte, bool) {
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
	if !ok || path == "" || filepath.IsAbs(path) {
		return nil, false
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

// The agent's commits. The sandbox's HEAD when it was made is recorded
// (Session.GitStart); commits the agent makes on top are brought into the
// real repository as a branch by a fetch from the sandbox, which writes the
// objects and that one ref, nothing else: no FETCH_HEAD, no maintenance,
// no tags, no submodules; the user's HEAD, index, working tree and other
// refs are never touched.
//
// Git in the sandbox runs under the policy of internal/git for a
// repository workforce does not trust (the agent wrote it): nothing its
// configuration names runs, and no command that reads the working tree
// (status, diff against it) is asked; what the agent left as committed is
// found by hashing its files here (CommittedOnly). The fetch runs in the
// real repository; upload-pack, in the sandbox, runs nothing the sandbox
// configures either (see the package documentation of internal/git).

// gitRun runs git in dir, a directory of the sandbox (or "" for none),
// with stdin, under the policy for a repository workforce does not trust,
// and returns its standard output.
func gitRun(dir string, stdin []byte, args ...string) ([]byte, error) {
	return git.Repo{Dir: dir}.Run(context.Background(), stdin, args...)
}

// realGit runs git in dir, in the user's real repository, under the
// user's configuration, and returns its standard output.
func realGit(dir string, args ...string) ([]byte, error) {
	return git.Repo{Dir: dir, Trust: git.Trusted}.Run(context.Background(), nil, args...)
}

// head returns the commit the sandbox's HEAD names; empty without a
// repository of the sandbox's own, a commit, or git.
func (s *Sandbox) head() string {
	gitDir := filepath.Join(s.Tree, ".git")
	if fi, err := os.Lstat(gitDir); err != nil || !fi.IsDir() {
		return ""
	}
	if h, ok := readHead(gitDir); ok {
		return h
	}
	out, err := gitRun(s.Tree, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return ""
	}
	if h := strings.TrimSpace(string(out)); git.IsObjectName(h) {
		return h
	}
	return ""
}

// readHead resolves HEAD from the files of the git directory gitDir, as
// `git rev-parse --verify HEAD^{commit}` does for the common layouts,
// without starting git (every run asks, before the harness starts): HEAD
// naming a commit, or a branch whose ref is a loose file or a line of
// packed-refs; no HEAD file, or a branch with no commit yet, is no commit.
// ok is false for anything else, which git is asked about: a reftable
// repository, a linked worktree's common directory, a symbolic ref or a
// link where a file should be. The name is taken to be a commit's.
func readHead(gitDir string) (string, bool) {
	regular := func(name string) ([]byte, bool, bool) { // data, exists, ok
		p := filepath.Join(gitDir, filepath.FromSlash(name))
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, true
		}
		if err != nil || !fi.Mode().IsRegular() {
			return nil, false, false
		}
		data, err := os.ReadFile(p)
		return data, true, err == nil
	}
	if _, exists, ok := regular("commondir"); exists || !ok {
		return "", false
	}
	head, exists, ok := regular("HEAD")
	if !ok {
		return "", false
	}
	if !exists {
		return "", true // not a repository: git finds no HEAD either
	}
	line := strings.TrimSpace(string(head))
	if git.IsObjectName(line) {
		return line, true
	}
	ref, found := strings.CutPrefix(line, "ref: ")
	if !found || !strings.HasPrefix(ref, "refs/heads/") || ref == "refs/heads/.invalid" || strings.Contains(ref, "..") {
		return "", false
	}
	loose, exists, ok := regular(ref)
	if !ok {
		return "", false
	}
	if exists {
		if h := strings.TrimSpace(string(loose)); git.IsObjectName(h) {
			return h, true
		}
		return "", false
	}
	packed, exists, ok := regular("packed-refs")
	if !ok {
		return "", false
	}
	if exists {
		for _, l := range strings.Split(string(packed), "\n") {
			if h, name, ok := strings.Cut(l, " "); ok && name == ref && git.IsObjectName(h) {
				return h, true
			}
		}
	}
	return "", true // a branch with no commit yet
}

// GitStart returns the commit the sandbox's HEAD named when it was made;
// empty when the project has no repository or no commit.
func (s *Sandbox) GitStart() string { return s.gitStart }

// Commits is what the agent did to the sandbox's HEAD.
type Commits struct {
	// Head is the commit the sandbox's HEAD names; empty without one.
	Head string
	// New is the number of commits on Head since GitStart that the agent
	// made (see Session.Commits).
	New int
	// Moved says Head is not GitStart though the agent made no commit on
	// it: HEAD, or its branch, was moved to a commit the repository
	// already had.
	Moved bool
}

// Commits returns what the agent committed: the sandbox's HEAD and the
// number of commits on it since GitStart that are the agent's. A commit
// is the agent's when git wrote it in the sandbox (its object is in the
// sandbox's own store, where git writes what the real repository does not
// have), or when no branch, tag or other ref of the real repository
// reaches it but the branches sessions made (sessions: their names' prefix
// below refs/heads/, such as "workforce/"). So a HEAD moved to commits the
// repository already had is no commit of the agent's, and one the agent
// made again as it was (the same tree, parents, author and time) is.
func (s *Sandbox) Commits(sessions string) (Commits, error) {
	if s.gitStart == "" {
		return Commits{}, nil
	}
	c := Commits{Head: s.head()}
	if c.Head == "" || c.Head == s.gitStart {
		return c, nil
	}
	out, err := gitRun(s.Tree, nil, "rev-list", c.Head, "^"+s.gitStart, "--")
	if err != nil {
		return c, err
	}
	all := strings.Fields(string(out))
	stored, err := git.StoredIn(filepath.Join(s.Tree, ".git", "objects"), all)
	if err != nil {
		return c, err
	}
	// The commits the real repository's refs reach are left out by the
	// refs' names, given on standard input.
	refs, err := realGit(s.Root, "for-each-ref", "--format=%(objecttype) %(objectname) %(*objecttype) %(*objectname) %(refname)")
	if err != nil {
		return c, err
	}
	var not bytes.Buffer
	for _, line := range strings.Split(string(refs), "\n") {
		f := strings.SplitN(line, " ", 5)
		if len(f) != 5 || strings.HasPrefix(f[4], "refs/heads/"+sessions) && sessions != "" {
			continue
		}
		switch {
		case f[0] == "commit" && git.IsObjectName(f[1]):
			fmt.Fprintf(&not, "^%s\n", f[1])
		case f[2] == "commit" && git.IsObjectName(f[3]):
			fmt.Fprintf(&not, "^%s\n", f[3])
		}
	}
	out, err = gitRun(s.Tree, not.Bytes(), "rev-list", "--ignore-missing", "--stdin", c.Head, "^"+s.gitStart, "--")
	if err != nil {
		return c, err
	}
	unreached := map[string]bool{}
	for _, name := range strings.Fields(string(out)) {
		unreached[name] = true
	}
	for _, name := range all {
		if stored[name] || unreached[name] {
			c.New++
		}
	}
	c.Moved = c.New == 0
	return c, nil
}

// ExportBranch brings the sandbox's HEAD into the real repository as the
// branch name (refs/heads/name), with the objects it needs: nothing else
// of the real repository changes. A branch of that name already there is
// replaced only when it is this session's (it names one of the agent's
// commits).
func (s *Sandbox) ExportBranch(name string) error {
	if err := checkBranchName(name); err != nil {
		return err
	}
	ref := "refs/heads/" + name
	if old, err := realGit(s.Root, "rev-parse", "--verify", "--quiet", ref); err == nil {
		head := s.head()
		if strings.TrimSpace(string(old)) == head {
			return nil
		}
		// This session's: one of the agent's commits, an earlier export.
		o := strings.TrimSpace(string(old))
		_, errHead := gitRun(s.Tree, nil, "merge-base", "--is-ancestor", o, head)
		_, errStart := gitRun(s.Tree, nil, "merge-base", "--is-ancestor", o, s.gitStart)
		if errHead != nil || errStart == nil {
			return fmt.Errorf("the real repository already has a branch %s that is not this session's", name)
		}
	}
	_, err := realGit(s.Root,
		"-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c", "fetch.writeCommitGraph=false",
		"-c", "protocol.file.allow=always",
		"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--no-auto-maintenance",
		s.Tree, "+HEAD:"+ref)
	if err != nil {
		return fmt.Errorf("cannot bring the agent's commits into %s: %w", s.Root, err)
	}
	return nil
}

// checkBranchName refuses a name git would not take as a branch.
func checkBranchName(name string) error {
	if _, err := gitRun(os.TempDir(), nil, "check-ref-format", "refs/heads/"+name); err != nil || strings.HasPrefix(name, "-") {
		return fmt.Errorf("%q is not a branch name", name)
	}
	return nil
}

// CommittedOnly returns the files the agent changed by commits (GitStart
// to HEAD) and left as committed: their content in the sandbox is HEAD's.
// They are on the branch; sync-back need not bring them as loose changes.
//
// The files are compared with HEAD's blobs here, byte for byte (git
// status would run the filters the sandbox's attributes name): a file a
// filter would make equal counts as changed, and syncs back as the agent
// left it.
func (s *Sandbox) CommittedOnly() (map[string]bool, error) {
	head := s.head()
	if s.gitStart == "" || head == "" || head == s.gitStart {
		return nil, nil
	}
	raw, err := gitRun(s.Tree, nil, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", "--no-ext-diff", "--no-textconv", s.gitStart, head, "--")
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	fields := strings.Split(string(raw), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		// :OLDMODE NEWMODE OLDNAME NEWNAME STATUS, then the path.
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		rel := fields[i+1]
		if len(meta) != 5 || rel == "" {
			return nil, fmt.Errorf("git diff-tree: cannot read %q", fields[i])
		}
		same, err := asCommitted(filepath.Join(s.Tree, filepath.FromSlash(rel)), meta[1], meta[3])
		if err != nil {
			return nil, err
		}
		if same {
			out[rel] = true
		}
	}
	return out, nil
}

// asCommitted reports whether the file at path is what a commit holds:
// the entry of mode mode and object name name (mode 000000: no entry).
func asCommitted(path, mode, name string) (bool, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return mode == "000000", nil
	}
	if err != nil {
		return false, err
	}
	switch mode {
	case "160000": // a submodule's commit: its files are its own
		return true, nil
	case "120000":
		if fi.Mode()&fs.ModeSymlink == 0 {
			return false, nil
		}
		target, err := os.Readlink(path)
		if err != nil {
			return false, err
		}
		blob, err := git.BlobName(name, strings.NewReader(target), int64(len(target)))
		return blob == name, err
	case "100644", "100755":
		if !fi.Mode().IsRegular() || (fi.Mode().Perm()&0o111 != 0) != (mode == "100755") {
			return false, nil
		}
		// Non-blocking: what is a file now may be a FIFO by the time it
		// is opened.
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return false, err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return false, err
		}
		blob, err := git.BlobName(name, f, fi.Size())
		return blob == name, err
	}
	return false, nil
}

// DeleteBranch deletes the branch name (refs/heads/name) of the real
// repository at root when it still names commit, as ExportBranch left it:
// a branch moved since, or checked out in a worktree, is refused and left
// as it is. A branch already gone is not an error.
func DeleteBranch(root, name, commit string) error {
	if err := checkBranchName(name); err != nil {
		return err
	}
	if !git.IsObjectName(commit) {
		return fmt.Errorf("%q is not a commit", commit)
	}
	ref := "refs/heads/" + name
	out, err := realGit(root, "for-each-ref", "--format=%(refname) %(objectname)", ref)
	if err != nil {
		return fmt.Errorf("cannot read the branches of %s: %w", root, err)
	}
	now := ""
	for _, line := range strings.Split(string(out), "\n") {
		if r, obj, ok := strings.Cut(line, " "); ok && r == ref {
			now = obj
		}
	}
	switch {
	case now == "":
		return nil
	case now != commit:
		return fmt.Errorf("the branch %s of %s has moved since the session made it: it is left as it is", name, root)
	}
	if wts, err := realGit(root, "worktree", "list", "--porcelain"); err == nil {
		for _, line := range strings.Split(string(wts), "\n") {
			if line == "branch "+ref {
				return fmt.Errorf("the branch %s of %s is checked out: it is left as it is", name, root)
			}
		}
	}
	if _, err := realGit(root, "update-ref", "-d", ref, commit); err != nil {
		return fmt.Errorf("cannot delete the branch %s of %s: %w", name, root, err)
	}
	return nil
}
