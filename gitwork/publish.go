package gitwork

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/git"
	"github.com/seed-3bc194a6/workforce/internal/quote"
)

// Published is the agent's work of one task, as it left the worker.
type Published struct {
	Branch string // "workforce/<session-id>" as pushed to url; "" when there was nothing to publish
	Base   string // the commit the task started from
	Commit string // the branch's commit; "" when nothing was published
	Patch  string // `git diff --binary Base Commit` (git apply-able), "" when nothing changed
	Files  int    // files changed between Base and Commit
}

// Signature is the author and committer of the commit Publish makes.
const Signature = "workforce <workforce>"

// Publish takes the work a one-shot run left in the clone work (started at base; the run was made with
// --sync-committed --sync-deletes, so the working tree holds everything the agent changed, and the agent's
// own commits, if any, are on the local branch `branch`), makes one commit of the working tree on top of
// the agent's commits (or of base when it made none) -- author and committer "workforce" -- under the
// local branch `branch`, and pushes it to url as refs/heads/<branch> (never a force push, never by a name
// the agent chose: the refspec is built from branch, which the caller derives from the session id). No
// change at all and no agent commit: nothing pushed, Published{Base: base}.
//
// The commit is made only when the working tree differs from the
// agent's last commit; it holds the files git add -A would take (those of
// that commit and the untracked ones not ignored), read as the package
// doc says. The patch is computed before the push, so an error leaves
// nothing pushed but for a push that failed half way.
func Publish(ctx context.Context, work, url, base, branch string) (Published, error) {
	if err := checkURL(url); err != nil {
		return Published{}, err
	}
	if err := checkCommit("base", base); err != nil {
		return Published{}, err
	}
	ref := "refs/heads/" + branch
	if branch == "" || strings.HasPrefix(branch, "-") {
		return Published{}, fmt.Errorf("invalid branch name %s", quote.Name(branch))
	}
	if _, err := run(ctx, untrusted(""), nil, "check-ref-format", ref); err != nil {
		return Published{}, fmt.Errorf("invalid branch name %s", quote.Name(branch))
	}
	fail := func(err error) (Published, error) {
		return Published{}, fmt.Errorf("cannot publish the work of %s to %s: %w", quote.Name(branch), Redact(url), err)
	}
	u := untrusted(work)
	if _, err := run(ctx, u, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", base+"^{commit}"); err != nil {
		return fail(fmt.Errorf("base %s is not a commit of the clone", base))
	}
	parent, hadBranch := base, false
	out, err := run(ctx, u, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	switch {
	case err == nil:
		parent, hadBranch = strings.TrimSpace(string(out)), true
	case exitCode(err) != 1:
		return fail(err)
	}
	tree, err := worktreeTree(ctx, work, parent)
	if err != nil {
		return fail(err)
	}
	out, err = run(ctx, u, nil, "rev-parse", "--verify", "--end-of-options", parent+"^{tree}")
	if err != nil {
		return fail(err)
	}
	commit := parent
	if tree != strings.TrimSpace(string(out)) {
		if commit, err = writeCommit(ctx, work, tree, parent, branch); err != nil {
			return fail(err)
		}
	}
	if commit == base {
		return Published{Base: base}, nil
	}
	if commit != parent || !hadBranch {
		old := ""
		if hadBranch {
			old = parent
		}
		if _, err := run(ctx, trusted(work), nil, "update-ref", "-m", "workforce: publish", ref, commit, old); err != nil {
			return fail(err)
		}
	}
	patch, err := run(ctx, u, nil, "diff", "--binary", "--no-ext-diff", "--no-textconv", "--no-color", base, commit)
	if err != nil {
		return fail(err)
	}
	names, err := run(ctx, u, nil, "diff", "--name-only", "-z", "--no-ext-diff", "--no-textconv", base, commit)
	if err != nil {
		return fail(err)
	}
	if _, err := run(ctx, trusted(work), nil, "push", "--quiet", "--no-verify", "--no-recurse-submodules", "--",
		url, ref+":"+ref); err != nil {
		return fail(err)
	}
	return Published{
		Branch: branch,
		Base:   base,
		Commit: commit,
		Patch:  string(patch),
		Files:  bytes.Count(names, []byte{0}),
	}, nil
}

// writeCommit writes the commit of tree on parent, by Signature, and
// returns its id.
func writeCommit(ctx context.Context, work, tree, parent, branch string) (string, error) {
	sig := fmt.Sprintf("%s %d +0000", Signature, time.Now().Unix())
	obj := fmt.Sprintf("tree %s\nparent %s\nauthor %s\ncommitter %s\n\nworkforce: the agent's uncommitted work (%s)\n",
		tree, parent, sig, sig, branch)
	out, err := run(ctx, untrusted(work), []byte(obj), "hash-object", "-t", "commit", "-w", "--no-filters", "--stdin")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// entry is a file of a tree.
type entry struct {
	mode, id string
}

// worktreeTree writes the tree of work's working tree as git add -A would
// stage it on parent, without running git on the working tree's files
// (see the package doc), and returns its id.
func worktreeTree(ctx context.Context, work, parent string) (string, error) {
	tmp, err := os.MkdirTemp("", "workforce-publish-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)

	// The paths: parent's, in an index of its own, and the untracked
	// files that are not ignored.
	listed, err := run(ctx, untrusted(work), nil, "ls-tree", "-r", "-z", "--full-tree", parent)
	if err != nil {
		return "", err
	}
	old := map[string]entry{}
	for _, rec := range strings.Split(strings.TrimSuffix(string(listed), "\x00"), "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if ok && len(f) == 3 {
			old[path] = entry{mode: f[0], id: f[2]}
		}
	}
	parentIndex := git.Repo{Dir: work, IndexFile: filepath.Join(tmp, "parent")}
	if _, err := run(ctx, parentIndex, listed, "update-index", "-z", "--index-info"); err != nil {
		return "", err
	}
	paths, err := run(ctx, parentIndex, nil, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return "", err
	}

	var index bytes.Buffer
	add := func(mode, id, path string) { fmt.Fprintf(&index, "%s %s\t%s\x00", mode, id, path) }
	var regular []string // paths to hash
	modes := map[string]string{}
	dirs := map[string]bool{}
	for _, path := range strings.Split(strings.TrimSuffix(string(paths), "\x00"), "\x00") {
		if path == "" || strings.HasSuffix(path, "/") { // a nested repository
			continue
		}
		fi, ok := lstatBelow(work, path, dirs)
		switch {
		case !ok:
			// Gone, or below a symlink: not in the commit.
		case old[path].mode == "160000":
			if fi.IsDir() {
				add(old[path].mode, old[path].id, path)
			}
		case fi.Mode().IsRegular():
			regular = append(regular, path)
			modes[path] = "100644"
			if fi.Mode()&0o100 != 0 {
				modes[path] = "100755"
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(filepath.Join(work, path))
			if err != nil {
				return "", fmt.Errorf("cannot read the link %s: %w", quote.Name(path), err)
			}
			out, err := run(ctx, untrusted(work), []byte(target), "hash-object", "-w", "--no-filters", "--stdin")
			if err != nil {
				return "", err
			}
			add("120000", strings.TrimSpace(string(out)), path)
		}
	}
	sort.Strings(regular)
	if len(regular) > 0 {
		var in bytes.Buffer
		for _, p := range regular {
			in.WriteString(cQuote(p))
			in.WriteByte('\n')
		}
		out, err := run(ctx, untrusted(work), in.Bytes(), "hash-object", "-w", "--no-filters", "--stdin-paths")
		if err != nil {
			return "", err
		}
		ids := strings.Fields(string(out))
		if len(ids) != len(regular) {
			return "", fmt.Errorf("git hash-object stored %d files of %d", len(ids), len(regular))
		}
		for i, p := range regular {
			add(modes[p], ids[i], p)
		}
	}
	newIndex := git.Repo{Dir: work, IndexFile: filepath.Join(tmp, "new")}
	if _, err := run(ctx, newIndex, index.Bytes(), "update-index", "-z", "--index-info"); err != nil {
		return "", err
	}
	out, err := run(ctx, newIndex, nil, "write-tree")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// lstatBelow returns the file information of path (slashes, relative to
// root) unless it is missing or one of the directories leading to it is
// not a directory (a symlink, which could lead out of root). dirs
// remembers the directories found to be real.
func lstatBelow(root, path string, dirs map[string]bool) (fs.FileInfo, bool) {
	for i := 0; i < len(path); i++ {
		if path[i] != '/' {
			continue
		}
		dir := path[:i]
		if real, seen := dirs[dir]; seen {
			if !real {
				return nil, false
			}
			continue
		}
		fi, err := os.Lstat(filepath.Join(root, dir))
		dirs[dir] = err == nil && fi.IsDir()
		if !dirs[dir] {
			return nil, false
		}
	}
	fi, err := os.Lstat(filepath.Join(root, path))
	if err != nil {
		return nil, false
	}
	return fi, true
}

// cQuote quotes path as git's unquote_c_style reads it: in double quotes,
// with '"' and '\' escaped and every byte that is not printable ASCII in
// octal.
func cQuote(path string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
