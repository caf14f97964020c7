package mount

// The overlay sandbox (issue 44): instead of a copy, the harness sees the
// project through an overlay that package confine's launcher mounts in
// the harness's own mount namespace, the real project as the read-only
// lower layer and the sandbox's upper directory taking every write. mount
// makes the directories (Create with Options.Overlay), writes what
// workforce materializes into the upper layer, and reads the upper layer
// alone to sync back (overlaysync.go): what the agent changed, in the time
// of what it changed.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/internal/git"
)

// The parts of an overlay sandbox's directory besides TreeDir (which is
// the empty directory the launcher mounts the merged tree on) and
// ConflictsDir.
const (
	// UpperDir is the overlay's upper layer: the agent's writes,
	// whiteouts for its deletions, and what workforce materializes.
	UpperDir = "upper"
	// WorkDir is overlayfs's work directory, on the same file system.
	WorkDir = "work"
)

// ErrOverlay is the error of what an overlay sandbox cannot do: live
// sync (the merged tree exists only in the harness's namespace) and warm
// trees (there is no copy to keep).
var ErrOverlay = errors.New("not available with an overlay sandbox (--tree overlay)")

// OverlayLayers are what the launcher needs to show the harness the
// project through an overlay (confine.Overlay: Lower is Sandbox.Root,
// Target Sandbox.Tree), and what sync-back judges the upper layer by.
type OverlayLayers struct {
	// Upper and Work are the overlay's upper and work directories, under
	// the sandbox directory (the same file system).
	Upper, Work string
	// Whiteouts are the real tree's paths (relative, with slashes) the
	// agent must not see: what the copy would leave out (the ignore
	// patterns, the hidden instruction files, names taken for .git).
	// The launcher hides each as a whiteout; sync-back takes none of
	// them for a deletion of the agent's.
	Whiteouts []string
	// Started is when the sandbox was made, by the clock of the file
	// system of the upper layer (its change time): a real file changed
	// later, which the agent changed too, is a conflict.
	Started time.Time
	// dirs are the project's directories the overlay shows (relative,
	// with slashes, "" for the root), as findWhiteouts listed them: what
	// WatchReads watches. Not kept with the sandbox's state.
	dirs []string
}

// createOverlay makes s, with the rules r, an overlay sandbox of o: the
// upper and work directories, the tree as an empty directory with the
// directories down to the working directory (which must exist before the
// launcher mounts over the tree), and the whiteouts. Nothing is copied.
func createOverlay(ctx context.Context, o Options, r *Rules, s *Sandbox) error {
	if o.Warm != "" {
		return fmt.Errorf("a warm tree: %w", ErrOverlay)
	}
	ov := &OverlayLayers{Upper: filepath.Join(s.Dir, UpperDir), Work: filepath.Join(s.Dir, WorkDir)}
	if err := os.Mkdir(ov.Upper, 0o700); err != nil {
		return fmt.Errorf("cannot make the overlay's directories: %w", err)
	}
	s.Overlay = ov // from here on, Create's failure removes them
	if err := os.Mkdir(ov.Work, 0o700); err != nil {
		return fmt.Errorf("cannot make the overlay's directories: %w", err)
	}
	if err := os.Mkdir(s.Tree, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(s.Workdir, 0o755); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Stat(ov.Upper, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: ov.Upper, Err: err}
	}
	ov.Started = time.Unix(st.Ctim.Unix())
	s.gitDirs = projectGitDirs(o.Root)
	cache := openListingCache(s.home, o.Root, r, s.gitDirs)
	scan, err := findWhiteouts(ctx, o.Root, r, s.gitDirs, cache)
	if err != nil {
		return err
	}
	cache.save()
	ov.Whiteouts, ov.dirs = scan.hide, scan.dirs
	if err := s.sealOverlayGitFiles(scan.dotgits); err != nil {
		return err
	}
	s.skipped = append([]string(nil), ov.Whiteouts...)
	// No manifest: the base of a path is taken when the agent changed
	// it (stamp), or when a sync applied it (settle).
	s.manifest, s.realLinks, s.boxBase = map[string]entry{}, map[string]entry{}, map[string]entry{}
	if err := s.sealOverlayLinks(scan.links); err != nil {
		return err
	}
	for _, rel := range scan.readonly {
		if err := s.readonlyCopy(rel); err != nil {
			return fmt.Errorf("cannot make %s read-only in the sandbox: %w", rel, err)
		}
	}
	s.keepLinked(o.hooksDirs(), append(scan.links, realLinksLeftOut(o.Root, s.skipped)...))
	// The start commit is the real repository's HEAD: the lower layer's.
	s.gitStart = (&Sandbox{Tree: o.Root, Root: o.Root}).Head()
	return s.quietOverlayGit()
}

// sealOverlayGitFiles is sealGitFiles for an overlay sandbox: each
// nested .git file or link of the project (dotgits, sorted; the root's
// takes the copy, session.treeFor) gets its place in the upper layer, so
// that git in the sandbox never reaches the real repository it names. A
// file naming, by a relative path, a git directory the overlay shows is
// left as it is; one naming such a directory by an absolute path gets
// the relative path instead (the project is shown at another path); any
// other gets a .git directory of its own (ownGitDir) over it. One whose
// git directory cannot be made (a file that names none) is hidden, a whiteout,
// so that git there finds the enclosing repository, as in a copy. A git
// directory one names inside the project under another name joins the
// sandbox's git directories (namedGitDirs): never synced.
func (s *Sandbox) sealOverlayGitFiles(dotgits []string) error {
	ov := s.Overlay
	for _, rel := range dotgits {
		real := filepath.Join(s.Root, filepath.FromSlash(rel))
		box := filepath.Join(ov.Upper, filepath.FromSlash(rel))
		// A git directory it names inside the project under another
		// name is git's own, as in a copy: never synced.
		s.gitDirs = s.gitDirs.add(namedGitDirs(s.Root, real)...)
		if err := s.upperDirs(path.Dir(rel)); err != nil {
			return fmt.Errorf("cannot give the sandbox a git directory: %w", err)
		}
		if data, ok := innerGitFile(s.Root, real, s.Root, real); ok {
			if old, err := os.ReadFile(real); err == nil && bytes.Equal(old, data) {
				continue // shown as it is
			}
			if err := os.WriteFile(box, data, 0o644); err != nil {
				return fmt.Errorf("cannot give the sandbox a git directory: %w", err)
			}
			continue
		}
		if err := ownGitDir(real, box); err != nil {
			if err := removeAll(box); err != nil {
				return err
			}
			ov.Whiteouts = append(ov.Whiteouts, rel)
			sort.Strings(ov.Whiteouts)
		}
	}
	return nil
}

// quietOverlayGit is quietGit for an overlay sandbox: the tracked files
// the whiteouts hide are marked skip-worktree in a copy of the real
// index in the upper layer (which the agent's git then reads), so that
// git status there does not report them as deleted. The real index is
// read, never written. It does nothing without a .git directory at the
// top of the project, hidden files, or a git binary.
func (s *Sandbox) quietOverlayGit() error {
	realGit := filepath.Join(s.Root, ".git")
	if fi, err := os.Lstat(realGit); err != nil || !fi.IsDir() || len(s.skipped) == 0 {
		return nil
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil
	}
	out, err := git.Repo{GitDir: realGit}.Run(context.Background(), nil, "ls-files", "-z")
	if err != nil {
		return nil // not a usable repository: nothing to keep quiet
	}
	var tracked []string
	for f := range strings.SplitSeq(strings.TrimRight(string(out), "\x00"), "\x00") {
		if f != "" && below(f, s.skipped) {
			tracked = append(tracked, f)
		}
	}
	if len(tracked) == 0 {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(realGit, "index"))
	if err != nil {
		return nil
	}
	if err := s.upperDirs(".git"); err != nil {
		return err
	}
	index := filepath.Join(s.Overlay.Upper, ".git", "index")
	if err := os.WriteFile(index, data, 0o644); err != nil {
		return err
	}
	input := []byte(strings.Join(tracked, "\x00") + "\x00")
	if _, err := (git.Repo{GitDir: realGit, IndexFile: index}).Run(context.Background(), input, "update-index", "--skip-worktree", "-z", "--stdin"); err != nil {
		return fmt.Errorf("cannot mark hidden files in the sandbox's git index: %w", err)
	}
	return nil
}

// overlayScan is what findWhiteouts finds in the project, each list
// sorted, paths relative to the root with slashes: what the copy would
// leave out (the paths ignored by the rules' patterns, a directory as a
// whole, the hidden files, and the names taken for .git); the symbolic
// links and the read-only regular files of the rest (outside git
// directories); the nested .git files and links (sealOverlayGitFiles);
// and the directories of the project the listing covered, listed or
// taken from the listing cache ("" for the root; neither the hidden ones
// nor git directories). read is how many directories were read, not
// taken from the cache.
type overlayScan struct {
	hide, links, readonly, dotgits, dirs []string
	read                                 int
}

// findWhiteouts lists the directories of root for an overlay sandbox with
// the rules r and the git directories gd (overlayScan). It lists
// directories (names and types, no stat of the files: the file system's
// directory entries say what is a directory), never copies: because the
// default excludes and the hidden instruction file names apply at every
// level, every directory of the tree but the ignored ones and the git
// directories is covered, on several goroutines. With the listing cache
// c (overlaylist.go; nil for none), a directory unchanged since a
// listing of the same rules costs an lstat instead of a listing, which
// makes the listing nearly flat in the size of the tree
// (BenchmarkOverlayCreate/whiteouts).
func findWhiteouts(ctx context.Context, root string, r *Rules, gd gitDirs, c *listingCache) (overlayScan, error) {
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		first error
		out   overlayScan
	)
	// Directories are listed on several goroutines: a token each, the
	// rest inline.
	tokens := make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	var walk func(rel string)
	walk = func(rel string) {
		ls, read, err := c.list(ctx, root, rel, r, gd)
		mu.Lock()
		out.hide, out.links, out.readonly = append(out.hide, ls.hide...), append(out.links, ls.links...), append(out.readonly, ls.readonly...)
		out.dotgits = append(out.dotgits, ls.dotgits...)
		if !ls.unlistable {
			out.dirs = append(out.dirs, rel)
		}
		if read {
			out.read++
		}
		if err != nil && first == nil {
			first = err
		}
		stop := first != nil
		mu.Unlock()
		if stop {
			return
		}
		for _, d := range ls.dirs {
			select {
			case tokens <- struct{}{}:
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { <-tokens }()
					walk(d)
				}()
			default:
				walk(d)
			}
		}
	}
	walk("")
	wg.Wait()
	if first != nil {
		return overlayScan{}, fmt.Errorf("cannot list %s for the overlay: %w", root, first)
	}
	for _, l := range [][]string{out.hide, out.links, out.readonly, out.dotgits, out.dirs} {
		sort.Strings(l)
	}
	return out, nil
}

// overlayListing is what listForOverlay finds in one directory: what it
// hides, its links, its read-only files, its nested .git files and links,
// and the directories to list; unlistable says the directory could not be
// listed, and is hidden itself (never cached).
type overlayListing struct {
	hide, links, readonly, dotgits, dirs []string
	unlistable                           bool
}

// listForOverlay lists the directory rel of root for findWhiteouts: what
// it hides, its links, its read-only files and the directories to list;
// and the directory's stat, taken before its entries are read (nil when
// the directory cannot be listed, which the agent cannot either).
func listForOverlay(ctx context.Context, root, rel string, r *Rules, gd gitDirs) (ls overlayListing, st *unix.Stat_t, err error) {
	if err := ctx.Err(); err != nil {
		return ls, nil, err
	}
	f, err := openDir(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		switch {
		case rel != "" && errors.Is(err, fs.ErrPermission):
			// A directory the user cannot list (mode 100, 000) is
			// hidden whole: what it holds cannot be known, so neither
			// can what the rules hide in it, and the harness, which
			// may search it as the user may, would reach a hidden
			// file by its name. The copy, made with the user's
			// rights, has none of it either. Not cached (no stat):
			// listed again on the next run.
			ls.hide, ls.unlistable = append(ls.hide, rel), true
			return ls, nil, nil
		case rel != "" && errors.Is(err, fs.ErrNotExist):
			return ls, nil, nil // gone since its parent was listed
		}
		return ls, nil, err
	}
	st = new(unix.Stat_t)
	if unix.Fstat(int(f.Fd()), st) != nil {
		st = nil
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return ls, nil, err
	}
	for _, e := range ents {
		sub := path.Join(rel, e.Name())
		isDir := e.IsDir()
		switch {
		case e.Name() == ".git" && !isDir && rel != "":
			ls.dotgits = append(ls.dotgits, sub) // a nested repository's: sealed
		case e.Name() == ".git" || gd.isGitDir(sub) || gd.inGit(sub):
			// git's own: shown, never synced
		case dotGitAlias(sub), r.ignoredLeaf(sub, isDir), !isDir && r.hidden(sub):
			ls.hide = append(ls.hide, sub)
		case isDir:
			ls.dirs = append(ls.dirs, sub)
		case e.Type()&fs.ModeSymlink != 0:
			ls.links = append(ls.links, sub)
		case e.Type().IsRegular() && r.isReadonly(sub):
			ls.readonly = append(ls.readonly, sub)
		}
	}
	return ls, st, nil
}

// openDir opens a directory of the project for listForOverlay; the tests
// make it refuse as a directory the user cannot list does.
var openDir = os.Open

// readonlyCopy puts in the upper layer a copy of the real file rel
// without write permission, as a copy's sandbox has it (.agentreadonly,
// the persona's read-only patterns): the overlay shows it instead of the
// real one. Its base is the real file as it is (the manifest's entry), so
// that sync-back takes it as untouched until the agent changes it, and
// then never syncs it.
func (s *Sandbox) readonlyCopy(rel string) error {
	dir, name := path.Split(rel)
	dir = strings.TrimSuffix(dir, "/")
	if dir != "" {
		if err := s.upperDirs(dir); err != nil {
			return err
		}
	}
	open := func(base string) (int, error) {
		return unix.Open(filepath.Join(base, filepath.FromSlash(dir)), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	rfd, err := open(s.Root)
	if err != nil {
		return err
	}
	defer unix.Close(rfd)
	ufd, err := open(s.Overlay.Upper)
	if err != nil {
		return err
	}
	defer unix.Close(ufd)
	var st unix.Stat_t
	if err := unix.Fstatat(rfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil // gone or changed meanwhile: nothing to protect
	}
	if err := copyFileAt(rfd, ufd, name, &st); err != nil {
		return err
	}
	if err := unix.Fchmodat(ufd, name, uint32(st.Mode)&0o7777&^0o222, 0); err != nil {
		return err
	}
	s.manifest[rel] = entry{size: st.Size, mtime: st.Mtim.Nano(), mode: fileMode(uint32(st.Mode))}
	s.readonly[rel] = true
	return nil
}

// sealOverlayLinks makes again, in the upper layer, each of the real
// tree's links (links) that would lead the harness to a path of the real
// tree, or dangle, as a copy makes them (sealLink): pointing to the same
// place in the tree, where the overlay shows the project. The link the
// real tree has is then hidden by the upper layer's, and sync-back knows
// it for workforce's (Sandbox.links), as a copy's.
func (s *Sandbox) sealOverlayLinks(links []string) error {
	for _, rel := range links {
		src := filepath.Join(s.Root, filepath.FromSlash(rel))
		target, err := os.Readlink(src)
		if err != nil {
			continue // gone meanwhile
		}
		t, sealed := sealLink(s.Root, s.Tree, src, target)
		if !sealed {
			continue
		}
		if dir := path.Dir(rel); dir != "." {
			if err := s.upperDirs(dir); err != nil {
				return fmt.Errorf("cannot make the link %s again in the sandbox: %w", rel, err)
			}
		}
		if err := os.Symlink(t, filepath.Join(s.Overlay.Upper, filepath.FromSlash(rel))); err != nil {
			return fmt.Errorf("cannot make the link %s again in the sandbox: %w", rel, err)
		}
		s.links[rel] = t
	}
	return nil
}

// writeRoot is where workforce writes into the sandbox: the upper layer
// of an overlay, the tree of a copy.
func (s *Sandbox) writeRoot() string {
	if s.Overlay != nil {
		return s.Overlay.Upper
	}
	return s.Tree
}

// AgentPath returns where the agent's version of rel (relative to the
// tree, with slashes) is read outside the harness's namespace: in the
// tree of a copy; in the upper layer of an overlay, where it exists only
// when the agent wrote it (else the real file is the agent's view).
func (s *Sandbox) AgentPath(rel string) string {
	return filepath.Join(s.writeRoot(), filepath.FromSlash(rel))
}

// upperDirs makes, in the upper layer, the directories of rel (a
// directory, relative to the tree) that are missing, each with the mode
// of the real directory at its place (0755 where there is none; the
// owner's write permission added, for what workforce writes below), so
// that the merged directory looks as the real one (but for its times,
// which what is written in it moves). A directory of rel that the
// whiteouts hide is made opaque, so that the real one's entries stay
// hidden under it, and leaves the whiteouts (the launcher would find it
// there).
func (s *Sandbox) upperDirs(rel string) error {
	if rel == "." || rel == "" {
		return nil
	}
	done := ""
	for _, name := range strings.Split(rel, "/") {
		done = path.Join(done, name)
		p := filepath.Join(s.Overlay.Upper, filepath.FromSlash(done))
		fi, err := os.Lstat(p)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory in the upper layer", done)
			}
			continue
		}
		mode := fs.FileMode(0o755)
		if rfi, err := os.Lstat(filepath.Join(s.Root, filepath.FromSlash(done))); err == nil && rfi.IsDir() {
			mode = rfi.Mode().Perm()
		}
		// Whatever the umask; the owner keeps the right to write there
		// (workforce writes below it).
		if err := os.Mkdir(p, 0o700); err != nil {
			return err
		}
		if err := os.Chmod(p, mode|0o700); err != nil {
			return err
		}
		if i := sort.SearchStrings(s.Overlay.Whiteouts, done); i < len(s.Overlay.Whiteouts) && s.Overlay.Whiteouts[i] == done {
			if err := unix.Lsetxattr(p, opaqueXattr, []byte("y"), 0); err != nil {
				return fmt.Errorf("cannot hide the directory %s of the project: %w", done, err)
			}
			s.Overlay.Whiteouts = append(s.Overlay.Whiteouts[:i:i], s.Overlay.Whiteouts[i+1:]...)
		}
	}
	return nil
}

// dropWhiteout removes rel from the whiteouts: workforce wrote its own
// file there, which hides the real one.
func (s *Sandbox) dropWhiteout(rel string) {
	if s.Overlay == nil {
		return
	}
	w := s.Overlay.Whiteouts
	if i := sort.SearchStrings(w, rel); i < len(w) && w[i] == rel {
		s.Overlay.Whiteouts = append(w[:i:i], w[i+1:]...)
	}
}

// The extended attributes overlayfs reads with the option userxattr.
const (
	opaqueXattr   = "user.overlay.opaque"
	whiteoutXattr = "user.overlay.whiteout"
	// originXattr marks a file the overlay copied up from the lower
	// layer (a change of a real file, not a new one).
	originXattr = "user.overlay.origin"
)

// removeOverlay removes an overlay sandbox's directory: the upper and
// work directories first, which overlayfs and the agent may leave
// unlistable.
func (s *Sandbox) removeOverlay() error {
	err := confine.RemoveOverlayDirs(s.Overlay.Upper, s.Overlay.Work)
	return errors.Join(err, removeAll(s.Dir))
}

// getxattr returns the extended attribute name of path (not followed).
func getxattr(path, name string) (string, error) {
	buf := make([]byte, 64)
	n, err := unix.Lgetxattr(path, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// MergedPath returns where the entry rel of the tree (relative, with
// slashes), as the agent sees it, is read outside the harness's
// namespace, and false when the agent sees none there. For a copy it is
// the tree's path. For an overlay it is the upper layer's entry where the
// upper layer has one, else the real tree's, unless a whiteout (made, or
// one of OverlayLayers.Whiteouts, which the launcher makes) or an opaque
// directory on the way hides it: the overlay's lookup, in Go, for
// workforce's own reading of the agent's tree (its git HEAD and logs)
// when no namespace holds the mount (a crashed session's).
func (s *Sandbox) MergedPath(rel string) (string, bool) {
	if s.Overlay == nil {
		p := filepath.Join(s.Tree, filepath.FromSlash(rel))
		_, err := os.Lstat(p)
		return p, err == nil
	}
	if !safeRel(rel) {
		return "", false
	}
	if rel == "." {
		return s.Overlay.Upper, true
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		up := filepath.Join(s.Overlay.Upper, filepath.FromSlash(prefix))
		var st unix.Stat_t
		if unix.Lstat(up, &st) != nil {
			// Not in the upper layer: the real tree's, unless hidden.
			if below(prefix, s.Overlay.Whiteouts) {
				return "", false
			}
			p := filepath.Join(s.Root, filepath.FromSlash(rel))
			if _, err := os.Lstat(p); err != nil {
				return "", false
			}
			return p, true
		}
		switch {
		case st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == 0:
			return "", false // a whiteout
		case i == len(parts)-1:
			if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size == 0 && hasXattrPath(up, whiteoutXattr) {
				return "", false
			}
			return up, true
		case st.Mode&unix.S_IFMT != unix.S_IFDIR:
			return "", false
		case hasXattrPath(up, opaqueXattr):
			// The real directory is hidden: the rest is the upper
			// layer's or nothing.
			rest := filepath.Join(s.Overlay.Upper, filepath.FromSlash(rel))
			if unix.Lstat(rest, &st) != nil || st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == 0 {
				return "", false
			}
			return rest, true
		}
	}
	return "", false
}

// hasXattrPath reports whether path (not followed) has the extended
// attribute attr ("y" for the opaque mark).
func hasXattrPath(path, attr string) bool {
	v, err := getxattr(path, attr)
	return err == nil && (attr != opaqueXattr || v == "y")
}

// overlayGit reports whether the agent's tree has a .git directory at its
// top: the only layout of an overlay sandbox's repository workforce reads
// without git (a .git file naming a git directory elsewhere is not read).
func (s *Sandbox) overlayGit() bool {
	p, ok := s.MergedPath(".git")
	if !ok {
		return false
	}
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

// overlayHead is ReadHead of an overlay sandbox: HEAD and the ref it names
// read through MergedPath. What readHead leaves to git (a symbolic ref, a
// reftable repository) is an error: git cannot run on the merged tree
// outside the namespace.
func (s *Sandbox) overlayHead() (string, error) {
	if !s.overlayGit() {
		return "", nil
	}
	h, ok, err := readHeadBy(func(name string) string {
		if p, ok := s.MergedPath(".git/" + name); ok {
			return p
		}
		return filepath.Join(s.Dir, "no such file") // none
	})
	if err != nil {
		return "", fmt.Errorf("cannot read the sandbox's HEAD: %w", err)
	}
	if !ok {
		return "", errors.New("cannot read the sandbox's HEAD: a layout only git reads, and git cannot read the overlay from outside")
	}
	return h, nil
}

// overlayCommitted is CommittedInSandbox of an overlay sandbox: the
// agent's HEAD log read through MergedPath.
func (s *Sandbox) overlayCommitted() map[string]bool {
	p, ok := s.MergedPath(".git/logs/HEAD")
	if !ok || !s.overlayGit() {
		return map[string]bool{}
	}
	return committedIn(p, filepath.Join(s.Root, ".git", "logs", "HEAD"))
}
