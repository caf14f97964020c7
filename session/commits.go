package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/seed-3bc194a6/workforce/internal/git"
	"github.com/seed-3bc194a6/workforce/mount"
)

// The agent's commits. The sandbox's HEAD when it was made is recorded
// (mount.Sandbox.GitStart); commits the agent makes on top are brought
// into the real repository as a branch by a fetch from the sandbox, which
// writes the objects and that one ref, nothing else: no FETCH_HEAD, no
// maintenance, no tags, no submodules; the user's HEAD, index, working
// tree and other refs are never touched.
//
// Git in the sandbox runs under the policy of internal/git for a
// repository workforce does not trust (the agent wrote it): nothing its
// configuration names runs, and no command that reads the working tree
// (status, diff against it) is asked; what the agent left as committed is
// found by hashing its files here (committedOnly). The fetch runs in the
// real repository; upload-pack, in the sandbox, runs nothing the sandbox
// configures either (see the package documentation of internal/git).

// sandboxGit runs git in dir, a directory of the sandbox (or "" for
// none), with stdin, under the policy for a repository workforce does not
// trust, and returns its standard output.
func sandboxGit(dir string, stdin []byte, args ...string) ([]byte, error) {
	return git.Repo{Dir: dir}.Run(context.Background(), stdin, args...)
}

// realGit runs git in dir, in the user's real repository, under the
// user's configuration, and returns its standard output.
func realGit(dir string, args ...string) ([]byte, error) { return realGitIn(dir, nil, args...) }

// realGitIn is realGit with stdin.
func realGitIn(dir string, stdin []byte, args ...string) ([]byte, error) {
	return git.Repo{Dir: dir, Trust: git.Trusted}.Run(context.Background(), stdin, args...)
}

// commits is what the agent did to the sandbox's HEAD.
type commits struct {
	// Head is the object the sandbox's HEAD names; empty without one.
	Head string
	// NotCommit, when set, says Head is no commit: the kind of object it
	// is ("blob", "tree", "tag"), or "missing" when neither the sandbox
	// nor the real repository has it. New is 0 then.
	NotCommit string
	// New is the number of commits on Head since GitStart that the agent
	// made (see agentCommits).
	New int
	// Moved says Head is a commit other than GitStart though the agent
	// made no commit on it: HEAD, or its branch, was moved to a commit
	// the repository already had.
	Moved bool
}

// agentCommits returns what the agent committed in box: the sandbox's
// HEAD and the number of commits on it since GitStart that are the
// agent's. A commit is the agent's when the sandbox's own object store
// holds it and the real repository's does not (git wrote it in the
// sandbox: git writes there only what the real store, shared as
// alternates, does not have), or when the real repository has it on the
// branches sessions made only (sessions: their names' prefix below
// refs/heads/, such as "workforce/"): the agent's commits brought in by an
// earlier sync of the session, or commits an earlier session made and the
// user did not take; or when git recorded making it in the sandbox (its
// HEAD log) and no ref of the real repository reaches it: the same commit
// made again (the same tree, parent, author, message and second) after
// the branch that held it was deleted. A commit the real store has otherwise, reachable
// from a ref of the user's or only from the reflog (a commit amended
// away), is not the agent's, also when the agent copied its object into
// the sandbox's store: a HEAD moved to commits the repository already had
// is no commit of the agent's (Moved). A HEAD that names no commit (a
// blob, a tree, an object no repository has) is reported as such
// (NotCommit).
func agentCommits(box *mount.Sandbox, sessions string) (commits, error) {
	start := box.GitStart()
	if start == "" {
		return commits{}, nil
	}
	head, err := box.ReadHead()
	if err != nil {
		return commits{}, err
	}
	c := commits{Head: head}
	if c.Head == "" || c.Head == start {
		return c, nil
	}
	kinds, err := objectKinds(sandboxGit, box.Tree, []string{c.Head})
	if err != nil {
		return c, err
	}
	if k := kinds[c.Head]; k != "commit" {
		c.NotCommit = k
		return c, nil
	}
	out, err := sandboxGit(box.Tree, nil, "rev-list", c.Head, "^"+start, "--")
	if err != nil {
		return c, err
	}
	all := strings.Fields(string(out))
	stored, err := git.StoredIn(agentObjects(box), all)
	if err != nil {
		return c, err
	}
	if len(all) > 0 {
		real, err := objectKinds(realGitIn, box.Root, all)
		if err != nil {
			return c, err
		}
		var bySession map[string]bool
		made := box.CommittedInSandbox()
		for _, name := range all {
			if real[name] == "missing" {
				if stored[name] {
					c.New++
				}
				continue
			}
			if bySession == nil {
				if bySession, err = sessionCommits(box.Root, sessions); err != nil {
					return c, err
				}
			}
			if bySession[name] || made[name] && !reachable(box.Root, name) {
				c.New++
			}
		}
	}
	c.Moved = c.New == 0
	return c, nil
}

// reachable reports whether a ref of the real repository at root (a branch,
// a tag, a remote's branch) reaches the commit name.
func reachable(root, name string) bool {
	out, err := realGit(root, "for-each-ref", "--count=1", "--contains", name, "--format=%(refname)")
	return err == nil && strings.TrimSpace(string(out)) != ""
}

// objectKinds returns the kind of each object of names ("commit", "blob",
// "tree", "tag"), "missing" for one the repository in dir does not have,
// asked by run (git cat-file --batch-check).
func objectKinds(run func(dir string, stdin []byte, args ...string) ([]byte, error), dir string, names []string) (map[string]string, error) {
	out, err := run(dir, []byte(strings.Join(names, "\n")+"\n"), "cat-file", "--batch-check=%(objectname) %(objecttype)")
	if err != nil {
		return nil, err
	}
	kinds := make(map[string]string, len(names))
	for _, line := range strings.Split(string(out), "\n") {
		if name, kind, ok := strings.Cut(line, " "); ok {
			kinds[name] = kind
		}
	}
	for _, name := range names {
		if _, ok := kinds[name]; !ok {
			return nil, fmt.Errorf("git cat-file: no answer for %s", name)
		}
	}
	return kinds, nil
}

// sessionCommits returns the commits of the real repository at root that
// the branches sessions made hold (sessions: their names' prefix below
// refs/heads/) and no other ref reaches; none when sessions is empty.
func sessionCommits(root, sessions string) (map[string]bool, error) {
	out := map[string]bool{}
	if sessions == "" {
		return out, nil
	}
	glob := "refs/heads/" + sessions + "*"
	list, err := realGit(root, "rev-list", "--glob="+glob, "--not", "--exclude="+glob, "--all", "--")
	if err != nil {
		return nil, err
	}
	for _, name := range strings.Fields(string(list)) {
		out[name] = true
	}
	return out, nil
}

// fetchBranch brings the HEAD of the sandbox box into the real repository
// as the branch name (refs/heads/name), with the objects it needs: nothing
// else of the real repository changes. A branch of that name already there is
// replaced only when it is this session's (it names one of the agent's
// commits).
func fetchBranch(box *mount.Sandbox, name string) error {
	if err := checkBranchName(name); err != nil {
		return err
	}
	ref := "refs/heads/" + name
	if old, err := realGit(box.Root, "rev-parse", "--verify", "--quiet", ref); err == nil {
		head := box.Head()
		if strings.TrimSpace(string(old)) == head {
			return nil
		}
		// This session's: one of the agent's commits, an earlier export.
		o := strings.TrimSpace(string(old))
		_, errHead := sandboxGit(box.Tree, nil, "merge-base", "--is-ancestor", o, head)
		_, errStart := sandboxGit(box.Tree, nil, "merge-base", "--is-ancestor", o, box.GitStart())
		if errHead != nil || errStart == nil {
			return fmt.Errorf("the real repository already has a branch %s that is not this session's", name)
		}
	}
	// The fetch reads the sandbox's files, which the agent wrote: it has
	// the time limit of git in the sandbox.
	_, err := git.Repo{Dir: box.Root, Trust: git.Trusted, Limit: git.UntrustedLimit}.Run(context.Background(), nil,
		"-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c", "fetch.writeCommitGraph=false",
		"-c", "protocol.file.allow=always",
		"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--no-auto-maintenance",
		box.Tree, "+HEAD:"+ref)
	if err != nil {
		return fmt.Errorf("cannot bring the agent's commits into %s: %w", box.Root, err)
	}
	return nil
}

// checkBranchName refuses a name git would not take as a branch.
func checkBranchName(name string) error {
	if _, err := sandboxGit(os.TempDir(), nil, "check-ref-format", "refs/heads/"+name); err != nil || strings.HasPrefix(name, "-") {
		return fmt.Errorf("%q is not a branch name", name)
	}
	return nil
}

// committedOnly returns the files the agent changed in box by commits
// (GitStart to HEAD) and left as committed: their content in the sandbox
// is HEAD's. They are on the branch; sync-back need not bring them as
// loose changes.
//
// The files are compared with HEAD's blobs here, byte for byte (git
// status would run the filters the sandbox's attributes name): a file a
// filter would make equal counts as changed, and syncs back as the agent
// left it.
func committedOnly(box *mount.Sandbox) (map[string]bool, error) {
	view, done, err := gitView(box)
	defer done()
	if err != nil {
		return nil, err
	}
	start := view.GitStart()
	head := view.Head()
	if start == "" || head == "" || head == start {
		return nil, nil
	}
	raw, err := sandboxGit(view.Tree, nil, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", "--no-ext-diff", "--no-textconv", start, head, "--")
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
		path, ok := box.MergedPath(rel)
		if !ok {
			if meta[1] == "000000" {
				out[rel] = true
			}
			continue
		}
		same, err := asCommitted(path, meta[1], meta[3])
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

// deleteBranch deletes the branch name (refs/heads/name) of the real
// repository at root when it still names commit, as fetchBranch left it:
// a branch moved since, or checked out in a worktree, is refused and left
// as it is. A branch already gone is not an error.
func deleteBranch(root, name, commit string) error {
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
