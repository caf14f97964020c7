package session

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/seed-3bc194a6/workforce/internal/git"
)

// An attempt's snapshots (attempt.go). The sandbox's tree is recorded
// twice, after the setup and after the agent, as git trees of a private
// repository in the session directory (attemptDir): outside the sandbox's
// tree and outside everything the harness may write, so that the agent
// can neither see nor change the baseline. What the agent changed, its
// patch and the content protected files are restored to all come from
// these two trees.
//
// Which files: those git would list as untracked in the tree (ls-files
// --others --exclude-standard), so that the .gitignore files of the tree
// decide, as they would in the project's repository: an ignored file (a
// dependency the setup installed, a build's output) is neither among the
// changes nor in the patch, and is not restored. Directories named .git
// are never entered (the agent's commits stay in the sandbox's own
// repository; its work is the files). Regular files and symbolic links
// are recorded; other kinds (a FIFO, a socket) are not. Nothing of the
// tree's git configuration or attributes runs: git runs here as in any
// repository workforce does not trust (internal/git), the files are
// hashed without filters, and the trees are compared without diff
// drivers.

// attemptDir is the directory of an attempt's private repository, in the
// session directory.
const attemptDir = "attempt"

// PatchMax is the size beyond which an attempt's patch is cut: only the
// diffs of the files that fit whole are kept, and a warning says so.
const PatchMax = 8 << 20

// entry is one file of a snapshot.
type entry struct {
	// mode is git's: 100644, 100755 or 120000 (a symbolic link).
	mode string
	// oid is its blob's object name.
	oid string
	// link is a symbolic link's target.
	link string
	// perm is a regular file's permission bits, to restore.
	perm fs.FileMode
}

// snapshot is the tree at one time, named name: its files by
// slash-separated path relative to the tree's root, and the git tree
// holding them, once written (treeOf).
type snapshot struct {
	name  string
	files map[string]entry
	tree  string
}

// snapshots is the private repository of an attempt's snapshots.
type snapshots struct {
	// dir is its directory (in the session directory), root the tree
	// it takes snapshots of.
	dir, root string
	// git runs in root, on the private repository.
	git git.Repo
}

// newSnapshots makes the private repository in dir, for snapshots of
// the tree root.
func newSnapshots(ctx context.Context, dir, root string) (*snapshots, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	// Not bare: ls-files lists the files of the directory it runs in
	// (root), with GIT_DIR naming this repository's git directory.
	repo := filepath.Join(dir, "repo")
	if _, err := (git.Repo{Dir: dir}).Run(ctx, nil, "init", "-q", "--template=", repo); err != nil {
		return nil, err
	}
	return &snapshots{dir: dir, root: root, git: git.Repo{Dir: root, GitDir: filepath.Join(repo, ".git")}}, nil
}

// take records the tree as it is now, named name (its git tree is
// written when a patch needs it: treeOf).
func (ss *snapshots) take(ctx context.Context, name string) (*snapshot, error) {
	out, err := ss.git.Run(ctx, nil, "ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	snap := &snapshot{name: name, files: map[string]entry{}}
	var regular []string // absolute paths of the files to hash
	rels := map[string]string{}
	links := "" // where the targets of links are written
	for _, rel := range strings.Split(string(out), "\x00") {
		if rel == "" || strings.HasSuffix(rel, "/") {
			continue // a repository of its own inside the tree
		}
		abs := filepath.Join(ss.root, filepath.FromSlash(rel))
		fi, err := os.Lstat(abs)
		if err != nil {
			continue
		}
		switch {
		case fi.Mode().IsRegular():
			mode := "100644"
			if fi.Mode().Perm()&0o111 != 0 {
				mode = "100755"
			}
			snap.files[rel] = entry{mode: mode, perm: fi.Mode().Perm()}
			regular = append(regular, abs)
			rels[abs] = rel
		case fi.Mode()&fs.ModeSymlink != 0:
			// Its blob is its target: written to a file of the
			// private directory, hashed with the rest.
			target, err := os.Readlink(abs)
			if err != nil {
				return nil, err
			}
			if links == "" {
				if links, err = os.MkdirTemp(ss.dir, "links-"); err != nil {
					return nil, err
				}
				defer os.RemoveAll(links)
			}
			f := filepath.Join(links, strconv.Itoa(len(rels)))
			if err := os.WriteFile(f, []byte(target), 0o600); err != nil {
				return nil, err
			}
			snap.files[rel] = entry{mode: "120000", link: target}
			regular = append(regular, f)
			rels[f] = rel
		}
	}
	ids, err := hashFiles(ctx, ss.git, regular)
	if err != nil {
		return nil, err
	}
	for abs, id := range ids {
		e := snap.files[rels[abs]]
		e.oid = id
		snap.files[rels[abs]] = e
	}
	return snap, nil
}

// treeOf returns the git tree of snap, written the first time.
func (ss *snapshots) treeOf(ctx context.Context, snap *snapshot) (string, error) {
	if snap.tree == "" {
		var err error
		if snap.tree, err = ss.writeTree(ctx, snap.name, snap.files); err != nil {
			return "", err
		}
	}
	return snap.tree, nil
}

// writeTree writes files as a git tree, through a new index named name,
// and returns its object name.
func (ss *snapshots) writeTree(ctx context.Context, name string, files map[string]entry) (string, error) {
	index := filepath.Join(ss.dir, name+".index")
	if err := os.Remove(index); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	idx := ss.git
	idx.IndexFile = index
	var info bytes.Buffer
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		e := files[rel]
		fmt.Fprintf(&info, "%s %s\t%s\x00", e.mode, e.oid, rel)
	}
	if info.Len() > 0 {
		if _, err := idx.Run(ctx, info.Bytes(), "update-index", "-z", "--add", "--index-info"); err != nil {
			return "", err
		}
	}
	out, err := idx.Run(ctx, nil, "write-tree")
	return strings.TrimSpace(string(out)), err
}

// changed reports whether a file differs between two snapshots: there
// in one only, or of another content or mode.
func changed(a, b entry, inA, inB bool) bool {
	return inA != inB || a.mode != b.mode || a.oid != b.oid
}

// differ reports whether any file differs between two snapshots.
func differ(before, after *snapshot) bool {
	if len(before.files) != len(after.files) {
		return true
	}
	for rel, a := range after.files {
		b, ok := before.files[rel]
		if changed(b, a, ok, true) {
			return true
		}
	}
	return false
}

// changesBetween returns the files created, updated and deleted from
// before to after, each list sorted and never nil. A rename is a
// deletion and a creation.
func changesBetween(before, after *snapshot) (created, updated, deleted []string) {
	created, updated, deleted = []string{}, []string{}, []string{}
	for rel, a := range after.files {
		b, ok := before.files[rel]
		switch {
		case !ok:
			created = append(created, rel)
		case changed(b, a, true, true):
			updated = append(updated, rel)
		}
	}
	for rel := range before.files {
		if _, ok := after.files[rel]; !ok {
			deleted = append(deleted, rel)
		}
	}
	slices.Sort(created)
	slices.Sort(updated)
	slices.Sort(deleted)
	return created, updated, deleted
}

// patch returns the diff from the tree before to after (git diff
// --binary --no-renames, paths as git apply reads them), and, when it is
// longer than max bytes, the diffs of the first files that fit whole
// (cut says so; size is the whole patch's length).
func (ss *snapshots) patch(ctx context.Context, before, after *snapshot, max int) (patch string, size int64, cut bool, err error) {
	if !differ(before, after) {
		return "", 0, false, nil // no git runs for an agent that changed nothing
	}
	// The two trees at once, each through its own index.
	var from string
	var ferr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		from, ferr = ss.treeOf(ctx, before)
	}()
	to, err := ss.treeOf(ctx, after)
	<-done
	if err = cmp.Or(ferr, err); err != nil {
		return "", 0, false, err
	}
	w := &headBytes{max: max}
	// In the private directory, which has no attributes file: the
	// tree's own attributes are not read.
	g := ss.git
	g.Dir = ss.dir
	err = g.Stream(ctx, w, nil, "diff", "--no-ext-diff", "--no-textconv", "--no-renames", "--binary",
		"--src-prefix=a/", "--dst-prefix=b/", "--color=never", from, to)
	if err != nil {
		return "", 0, false, err
	}
	out := w.buf.Bytes()
	if w.total > int64(max) {
		// Whole files only: a diff cut inside applies nowhere.
		if i := bytes.LastIndex(out, []byte("\ndiff --git ")); i >= 0 {
			out = out[:i+1]
		} else {
			out = nil
		}
		return string(out), w.total, true, nil
	}
	return string(out), w.total, false, nil
}

// headBytes keeps the first max bytes written to it and counts the rest.
type headBytes struct {
	max   int
	buf   bytes.Buffer
	total int64
}

func (h *headBytes) Write(p []byte) (int, error) {
	h.total += int64(len(p))
	if room := h.max - h.buf.Len(); room > 0 {
		h.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// Protected reports whether rel, a slash-separated path relative to the
// project, matches one of the globs protect (doublestar).
func Protected(protect []string, rel string) bool {
	for _, p := range protect {
		if ok, _ := doublestar.Match(p, rel); ok {
			return true
		}
	}
	return false
}

// restore brings every file matching protect that differs between before
// and after back to its state in before: its content and permissions, or
// its absence. It returns the paths restored, sorted. The tree is written
// through an os.Root: a directory the agent replaced by a symbolic link
// is made a directory again, never followed out of the tree.
func (ss *snapshots) restore(ctx context.Context, before, after *snapshot, protect []string) ([]string, error) {
	if len(protect) == 0 {
		return nil, nil
	}
	var paths []string
	for rel := range before.files {
		paths = append(paths, rel)
	}
	for rel := range after.files {
		if _, ok := before.files[rel]; !ok {
			paths = append(paths, rel)
		}
	}
	slices.Sort(paths)
	root, err := os.OpenRoot(ss.root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var restored []string
	for _, rel := range paths {
		b, inB := before.files[rel]
		a, inA := after.files[rel]
		if !changed(b, a, inB, inA) || !Protected(protect, rel) {
			continue
		}
		if err := ss.restoreOne(ctx, root, rel, b, inB); err != nil {
			return restored, fmt.Errorf("cannot restore %s: %w", rel, err)
		}
		restored = append(restored, rel)
	}
	return restored, nil
}

// restoreOne makes rel in root what e says (removed when !ok).
func (ss *snapshots) restoreOne(ctx context.Context, root *os.Root, rel string, e entry, ok bool) error {
	name := filepath.FromSlash(rel)
	if !ok {
		if _, err := root.Lstat(name); err != nil {
			return nil // gone already, or a parent is no directory
		}
		return root.RemoveAll(name)
	}
	if err := realDirs(root, path.Dir(rel)); err != nil {
		return err
	}
	if _, err := root.Lstat(name); err == nil {
		if err := root.RemoveAll(name); err != nil {
			return err
		}
	}
	if e.mode == "120000" {
		return root.Symlink(e.link, name)
	}
	data, err := ss.git.Run(ctx, nil, "cat-file", "blob", e.oid)
	if err != nil {
		return err
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, e.perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, bytes.NewReader(data))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Chmod(name, e.perm) // whatever the umask took
	}
	return err
}

// realDirs makes every directory of dir (slash-separated, relative to
// root) a real directory: missing ones are made, and anything else in
// their place (a file, a symbolic link) is removed first.
func realDirs(root *os.Root, dir string) error {
	if dir == "." || dir == "" {
		return nil
	}
	cur := ""
	for _, part := range strings.Split(dir, "/") {
		cur = path.Join(cur, part)
		name := filepath.FromSlash(cur)
		fi, err := root.Lstat(name)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil:
			if err := root.RemoveAll(name); err != nil {
				return err
			}
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if err := root.Mkdir(name, 0o755); err != nil {
			return err
		}
	}
	return nil
}
