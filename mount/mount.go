// Package mount makes and keeps the sandbox a persona's harness works in:
// a copy of the project, and, after the harness exits (or while it runs,
// with live sync), the sync-back of the agent's work to the real tree. The
// real tree is never written except by Sync and Live.
//
// The cut. mount is the tree: the copy (never hard links), the manifest,
// sync-back, the journal, live sync, warm trees, environment sealing and
// the sharing of git objects. It knows no persona, harness or instruction
// file convention, and imports only internal packages and confine: what
// to hide comes as names and paths in Options, what to write into the
// sandbox as files (Materialize, MaterializeDir). Which instruction files are hidden or
// folded (extend mode), the agent's branch in the real repository and the
// session directory around the sandbox are package session's, and where
// skills land package skill's; mount gives them what they need of the
// sandbox: its copy rules (NewRules), its start and current commits
// (GitStart, Head), a generic writer of directories (MaterializeDir).
//
// A sandbox directory (Sandbox.Dir) holds what mount makes and reads
// itself:
//
//	tree/          the copy of the project root the harness works in (TreeDir)
//	conflicts/     the agent's version of files that conflicted at sync-back (ConflictsDir)
//	manifest.json  the sandbox's durable state (ManifestFile, Save, Open)
//
// Session makes it as its session directory, named and placed by session,
// and keeps its own files there beside these. This differs from the
// design's table, which gives session the whole layout: these three names
// stay with the code that writes and reads them, so that Open needs
// nothing but the directory.
//
// What is left out of the copy: the default excludes (DefaultExcludes),
// the patterns of .agentignore and .<persona>.agentignore at the project
// root and the persona's mount.ignoredPatterns (gitignore syntax, with !
// negation; a file inside an excluded directory cannot be re-included), and
// the hidden instruction files (Options.Hide, Options.HidePaths). Files
// matching .agentreadonly or mount.readonlyPatterns are copied without
// write permission and never synced back. .git is copied, but for the
// repository's objects, which the sandbox's git shares (see git.go), so
// that git works in the sandbox; the files left out that git tracks are
// marked skip-worktree in the sandbox's index and materialized files are
// listed in its info/exclude, so that git status there is clean before the
// agent starts. Nothing under .git flows back, nor under a git directory
// of the project under another name that a .git file names (git.go).
//
// The harness must reach no path of the real tree: a symlink whose
// absolute target is inside the project is made again pointing to the same
// place in the sandbox, and a relative one that leads out of the project
// points to its target by an absolute path (sealLink); SealEnv rewrites
// the environment the same way.
//
// Sync-back compares each file with the manifest taken at copy time (size,
// modification time, mode): a file the agent changed flows back only when
// the real file is still as it was; otherwise it is a conflict, the real
// file stays and the agent's version is saved under conflicts/. Files whose
// content is unchanged are not written. What a sync applied is the base of
// the next one (the manifest takes the real file it left), so that the
// user's later edits and deletions of it are the user's. Deletions, of
// files and of links of the copy, are reported and applied only on
// request, and so are the directories they empty that the agent no longer
// has. A type change the agent made (a file, a directory, a link in the
// place of another of them) is a deletion and a change: its removal
// applies only on request, what takes its place waits for it
// (Report.Blocked), and it conflicts only where the user changed the path.
// Symlinks, FIFOs, sockets and devices the agent creates or puts in a
// file's place are reported, not synced. Policy files (.agentignore,
// .agentreadonly, .<persona>.agentignore, .agentworkforce/) never cross
// (Report.Refused), and executable configuration (.claude/, .mcp.json,
// opencode.json, .vscode/tasks.json, .envrc, git hook managers...) crosses
// only with SyncOptions.SyncConfig, else it is held (Report.Held), as are
// the git hooks directories (Options.HooksDirs); what they are through
// a link of the real tree is kept back as they are: the tables, their
// reasons, the folding of names and the links are in held.go. Sync-back follows no symbolic
// link below either root, and a type change on the real side is a
// conflict; a path it cannot read or write is reported in Report.Failed
// and the rest still syncs (Sync then returns a *SyncError); each file is
// written whole (an unnamed temporary file, or one named per sandbox and
// file), with its holes, never with setuid or setgid, never through a hard
// link, and put in place by an exchange checked after, so that a user's
// write between the check and the replacement stays, as a conflict
// (syncat.go, with the limits that remain). While the harness runs, a
// journal (journal_linux.go) records which entries change, so that
// sync-back need not stat every file.
//
// An overlay sandbox (Options.Overlay, overlay.go) is no copy: the harness
// sees the project through an overlay that package confine's launcher
// mounts on the tree in the harness's mount namespace, the project as the
// lower layer and the sandbox's upper/ taking every write (with work/,
// overlayfs's). Create makes the directories and finds the whiteouts of
// what a copy leaves out; what workforce materializes goes into the upper
// layer; Sync reads the upper layer alone (overlaysync.go). mount imports
// confine for removing those directories (confine.RemoveOverlayDirs),
// which overlayfs leaves unlistable.
//
// Off Linux (macOS, FreeBSD) the package builds and works without the
// Linux fast paths: the copy uses the portable fallbacks of
// copytree_other.go, as safe against planted links (a build with the
// portablefs tag runs the tests through them on Linux), sync-back walks
// the whole sandbox (no inotify journal), and Live fails.
package mount

import (
	"bufio"
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
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"golang.org/x/sys/unix"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
)

// DefaultExcludes are directory and file names never copied into a
// sandbox: dependency trees and caches that tools rebuild.
var DefaultExcludes = []string{
	"node_modules", ".cache", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache",
	".tox", ".gradle", ".next", ".turbo", ".parcel-cache", ".DS_Store",
}

// The parts of a sandbox directory that mount makes (see the package
// documentation).
const (
	// TreeDir is the copy of the project.
	TreeDir = "tree"
	// ConflictsDir holds the agent's version of each file that conflicted
	// at sync-back, at its path relative to the project root.
	ConflictsDir = "conflicts"
)

// Options say what to copy.
type Options struct {
	// Home is the workforce home: when it lies inside the project (a
	// dotfiles repository at the home directory), the copy leaves it out.
	Home string
	// Persona is the persona id, for .<persona>.agentignore.
	Persona string
	// Root is the real project root; Cwd the real working directory, at or
	// below Root. Both canonical.
	Root, Cwd string
	// Ignore and Readonly are extra gitignore-syntax patterns (the
	// persona's mount settings).
	Ignore, Readonly []string
	// Hide are instruction file names hidden at every level: base names
	// ("AGENTS.md") or slash paths (".claude/CLAUDE.md").
	Hide []string
	// HidePaths are files hidden by their path relative to Root, with
	// slashes (extend mode hides only the files it folds).
	HidePaths []string
	// Workers is the number of concurrent copy workers; 0 means a default.
	Workers int
	// Dir is the sandbox directory to make the sandbox in (session's
	// session directory): it may exist, but must not hold a sandbox yet.
	Dir string
	// HooksDirs are the real repository's git hooks directories
	// (absolute): where core.hooksPath points and the git directory's
	// hooks/. Each inside Root is held as executable configuration is
	// (HeldConfig), and so is where each link in one leads inside Root
	// (keepLinked).
	HooksDirs []string
	// HooksDirsLater, when set, returns HooksDirs (which is then unset),
	// asked for only once the tree is copied or listed: the caller's
	// question to git runs beside that.
	HooksDirsLater func() []string
	// Warm, when it names a tree a Park left, is moved into the sandbox
	// and refreshed to what a fresh copy would be, instead of copying
	// everything (run --reuse).
	Warm string
	// Overlay makes the sandbox an overlay of the project instead of a
	// copy (Sandbox.Overlay): nothing is copied, the launcher mounts the
	// project under the upper layer in the harness's namespace.
	Overlay bool
}

// hooksDirs returns HooksDirs, or what HooksDirsLater returns.
func (o Options) hooksDirs() []string {
	if o.HooksDirsLater != nil {
		return o.HooksDirsLater()
	}
	return o.HooksDirs
}

// Plan is what a sandbox would leave out, hide and protect; it is computed
// without copying, for dry runs.
type Plan struct {
	Hidden   []string `json:"hidden"`
	Readonly []string `json:"readonly"`
	Ignored  []string `json:"ignored"`
}

type entry struct {
	size  int64
	mtime int64 // nanoseconds since the epoch
	mode  fs.FileMode
}

// Sandbox is a copy of a project that a harness works in, with what its
// sync-back needs: the manifest of the real files at copy time, the copy
// rules and the journal. (Package session's Session is the run around it:
// its record, lock and phases.)
type Sandbox struct {
	// Dir is the sandbox directory; Tree the copy; Workdir the directory
	// of the copy matching the real working directory.
	Dir, Tree, Workdir string
	// Root is the real project root.
	Root string
	// Reused says the tree is a warm sandbox, refreshed.
	Reused bool
	// Overlay, for an overlay sandbox (Options.Overlay), is its layers;
	// nil for a copy. Tree is then the empty directory the launcher
	// mounts the merged tree on.
	Overlay *OverlayLayers

	after *seenState // the sandbox as Sync saw it, with SyncOptions.Remember

	// base is every entry the copy made, as it made it, and dirs its
	// directories; journal records what changes after (journal.go).
	base entryList
	dirs []string
	// baseFiles and baseLinks are the numbers of regular files and of
	// symbolic links in base, which are the manifest's until edited says
	// the manifest changed (live sync, a sync that applied changes).
	baseFiles, baseLinks int
	edited               bool
	journal              *journal

	gitStart string // the sandbox's HEAD commit when it was made (git.go)
	// gitDirs are the project's git directories under another name
	// than .git (git.go): never synced.
	gitDirs gitDirs

	rules *Rules
	// home is the workforce home whose overlay listing cache the
	// sandbox's listings use (overlaylist.go): Create's Options.Home, or
	// SetHome's for a sandbox opened from its state.
	home string
	// policyPaths and heldPaths are paths of the real tree kept back as
	// policy files and held as executable configuration are, with what
	// is below them, besides the tables: where a link of one leads, and
	// the git hooks directory (keepLinked). Sorted.
	policyPaths, heldPaths []string
	// manifest is the real files at copy time by path (slashes): made
	// by Open, or by Create from base in the background (makeManifest),
	// so that the harness does not wait for one insert per file;
	// realFiles waits for it.
	manifest   map[string]entry
	manifestOK chan struct{} // closed when Create's manifest is made
	// realLinks is the real tree's symbolic links at copy time, by path:
	// what the agent removed of them is a deletion (made with manifest).
	realLinks map[string]entry
	// boxBase is the sandbox side of the base where it is not the
	// manifest's: a file a sync applied is, in the manifest, the real
	// file the sync left, and here the sandbox's file as it was then
	// (the two differ in time). A file the agent changes after that is
	// changed against this entry.
	boxBase map[string]entry
	// applied are the files a Sync wrote back or found written, whose
	// base settle moves to what the real tree has now as it ends; moved
	// says a sync moved the base since the sandbox was made or opened.
	applied []string
	moved   bool

	readonly    map[string]bool
	materialize map[string]bool   // rel paths written by Materialize
	links       map[string]string // rel path -> target of symlinks made again by sealLink
	skipped     []string          // rel paths left out (files and directories)
}

// Rules are the copy rules of a sandbox: for a path relative to the
// project root, whether the copy leaves it out, hides it or makes it
// read-only. Create makes them of its Options; NewRules gives them to a
// caller that must know what a sandbox will hold before it is made
// (extend mode's discovery in the sandbox as it will be).
type Rules struct {
	ignore   *patternSet
	readonly *patternSet
	hide     []string
	hidePath map[string]bool
	// What the rules were made of, kept in the sandbox's state.
	ignLines, roLines, hidePaths []string
}

func parsePatterns(lines []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(l, nil))
	}
	return ps
}

func readPatterns(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines, sc.Err()
}

// NewRules returns the copy rules of a sandbox of o: DefaultExcludes, the
// .agentignore files at o.Root, o.Ignore, o.Readonly and the hidden
// names and paths.
func NewRules(o Options) (*Rules, error) {
	ign := append([]string(nil), DefaultExcludes...)
	for _, name := range []string{".agentignore", "." + o.Persona + ".agentignore"} {
		lines, err := readPatterns(filepath.Join(o.Root, name))
		if err != nil {
			return nil, err
		}
		ign = append(ign, lines...)
	}
	ign = append(ign, o.Ignore...)
	if o.Home != "" {
		// A workforce home inside the project (a dotfiles repository at
		// the home directory) is never copied into its own sandboxes.
		if rel, in := pathutil.Rel(o.Root, filepath.Clean(o.Home)); in && rel != "." {
			ign = append(ign, "/"+filepath.ToSlash(rel)+"/")
		}
	}
	ro, err := readPatterns(filepath.Join(o.Root, ".agentreadonly"))
	if err != nil {
		return nil, err
	}
	ro = append(ro, o.Readonly...)
	return rulesFrom(ign, ro, o.Hide, o.HidePaths), nil
}

// rulesFrom makes rules of gitignore-syntax ignore and read-only pattern
// lines and hidden names and paths.
func rulesFrom(ign, ro, hide, hidePaths []string) *Rules {
	hp := make(map[string]bool, len(hidePaths))
	for _, p := range hidePaths {
		hp[p] = true
	}
	return &Rules{
		ignore:    newPatternSet(ign),
		readonly:  newPatternSet(ro),
		hide:      hide,
		hidePath:  hp,
		ignLines:  ign,
		roLines:   ro,
		hidePaths: hidePaths,
	}
}

// match reports whether rel or one of its parent directories matches m.
func match(m *patternSet, rel string, isDir bool) bool {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		if m.Match(parts[:i], true) {
			return true
		}
	}
	return m.Match(parts, isDir)
}

// Ignored reports whether the copy leaves out rel (relative to the
// project root, with slashes), by itself or by a parent directory, by the
// ignore patterns; hidden files are not asked. Entries of git's own
// directories are never ignored.
func (r *Rules) Ignored(rel string, isDir bool) bool {
	if inGit(rel) {
		return false
	}
	return match(r.ignore, rel, isDir)
}

// ignoredLeaf is ignored for a walk that never enters an ignored
// directory: only rel itself is matched, its parents were admitted.
func (r *Rules) ignoredLeaf(rel string, isDir bool) bool {
	if inGit(rel) {
		return false
	}
	if !r.ignore.anyRest {
		return r.ignore.MatchRel(rel, isDir)
	}
	return r.ignore.Match(strings.Split(rel, "/"), isDir)
}

func (r *Rules) hidden(rel string) bool {
	if r.hidePath[rel] {
		return true
	}
	for _, h := range r.hide {
		if rel == h || strings.HasSuffix(rel, "/"+h) {
			return true
		}
	}
	return false
}

func (r *Rules) isReadonly(rel string) bool { return r.readonly.MatchRel(rel, false) }

// PlanFor computes what a sandbox of o would leave out, without copying.
func PlanFor(o Options) (*Plan, error) {
	r, err := NewRules(o)
	if err != nil {
		return nil, err
	}
	p := &Plan{Hidden: []string{}, Readonly: []string{}, Ignored: []string{}}
	gitDirs := projectGitDirs(o.Root)
	err = filepath.WalkDir(o.Root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := relSlash(o.Root, path)
		switch {
		case rel == ".":
			return nil
		case pathutil.IsDotGit(d.Name()) || gitDirs.isGitDir(rel):
			if d.IsDir() {
				return filepath.SkipDir
			}
		case r.Ignored(rel, d.IsDir()):
			p.Ignored = append(p.Ignored, rel)
			if d.IsDir() {
				return filepath.SkipDir
			}
		case !d.IsDir() && r.hidden(rel):
			p.Hidden = append(p.Hidden, rel)
		case !d.IsDir() && r.isReadonly(rel):
			p.Readonly = append(p.Readonly, rel)
		}
		return nil
	})
	return p, err
}

func relSlash(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}

// Create copies o.Root into the sandbox directory o.Dir, which may exist
// but must not hold a sandbox yet. With o.Overlay it copies nothing: it
// makes the upper and work directories of an overlay (UpperDir, WorkDir),
// the tree as an empty directory with the directories down to the
// working directory, and finds the whiteouts (OverlayLayers), which lists
// the directories of the tree but reads no file (findWhiteouts), or only
// lstats those unchanged since the last listing (the listing cache in
// o.Home, overlaylist.go). On error or when ctx is cancelled, what
// Create made is removed, and the sandbox directory with it when nothing
// else is in it.
func Create(ctx context.Context, o Options) (s *Sandbox, err error) {
	r, err := NewRules(o)
	if err != nil {
		return nil, err
	}
	rel, in := pathutil.Rel(o.Root, o.Cwd)
	if !in {
		return nil, fmt.Errorf("working directory %s is not inside the project root %s", o.Cwd, o.Root)
	}
	dir := o.Dir
	if dir == "" {
		return nil, errors.New("no sandbox directory to make the sandbox in")
	}
	if _, err := os.Stat(filepath.Join(dir, TreeDir)); err == nil {
		return nil, fmt.Errorf("session directory %s already holds a sandbox", dir)
	}
	s = &Sandbox{
		Dir: dir, Tree: filepath.Join(dir, TreeDir), Root: o.Root,
		rules: r, readonly: map[string]bool{}, materialize: map[string]bool{},
		links: map[string]string{}, home: o.Home,
	}
	s.Workdir = filepath.Join(s.Tree, rel)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the session directory: %w", err)
	}
	tree, made := s.Tree, s
	defer func() {
		if err != nil {
			made.journal.close()
			removeAll(tree)
			if ov := made.Overlay; ov != nil { // made here, not found
				_ = confine.RemoveOverlayDirs(ov.Upper, ov.Work)
			}
			os.Remove(dir) // when nothing else is in it
			s = nil
		}
	}()
	if o.Overlay {
		if err := createOverlay(ctx, o, r, s); err != nil {
			return nil, err
		}
		return s, nil
	}
	workers := o.Workers
	if workers <= 0 {
		workers = 2 * runtime.GOMAXPROCS(0)
	}
	s.gitDirs = projectGitDirs(o.Root)
	v := newCreateVisitor(o, r, s)
	var copyErr error
	if o.Warm != "" {
		state := loadWarmState(o.Warm)
		if err := os.Rename(o.Warm, s.Tree); err == nil {
			s.Reused = true
			copyErr = refreshTree(ctx, o.Root, s.Tree, workers, v, state)
		}
		if copyErr != nil && ctx.Err() == nil {
			// A warm tree that cannot be made fresh is dropped for a
			// fresh copy.
			if err := removeAll(s.Tree); err != nil {
				return nil, fmt.Errorf("cannot remove the warm sandbox %s: %w", s.Tree, err)
			}
			s.Reused, copyErr = false, nil
			s.readonly, s.links, s.skipped = map[string]bool{}, map[string]string{}, nil
			s.base, s.dirs, s.baseFiles, s.baseLinks = entryList{}, nil, 0, 0
			v = newCreateVisitor(o, r, s)
		}
	}
	if !s.Reused {
		copyErr = copyTree(ctx, o.Root, s.Tree, workers, v)
	}
	if err := copyErr; err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("cannot copy %s into the sandbox: %w", o.Root, err)
	}
	v.adoptGitDirs()
	s.makeManifest()
	// From here on, what changes in the tree is in the journal: what
	// Create still does, Materialize, and the harness.
	s.journal = startJournal(s.Tree, append(s.dirs, ""))
	if err := shareObjects(v.stores); err != nil {
		return nil, err
	}
	if err := sealGitLinks(s.Tree, v.gitLinks); err != nil {
		return nil, err
	}
	left, err := sealGitFiles(o.Root, s.Tree, v.dotgits)
	if err != nil {
		return nil, err
	}
	s.skipped = append(s.skipped, left...)
	if err := sealWorktrees(o.Root, s.Tree, v.gitdirs); err != nil {
		return nil, err
	}
	for _, e := range v.readonly {
		p := filepath.Join(s.Tree, filepath.FromSlash(e.rel))
		if err := os.Chmod(p, fileMode(e.st.mode).Perm()&^0o222); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(s.Workdir, 0o755); err != nil {
		return nil, err
	}
	sort.Strings(s.skipped)
	var links []string
	for e := range s.base.all() {
		if e.st.mode&unix.S_IFMT == unix.S_IFLNK {
			links = append(links, e.rel)
		}
	}
	s.keepLinked(o.hooksDirs(), append(links, realLinksLeftOut(o.Root, s.skipped)...))
	if err := s.quietGit(); err != nil {
		return nil, err
	}
	s.gitStart = s.Head()
	return s, nil
}

// createVisitor decides, for Create, what the copy of each entry of the
// project is, and records the manifest.
type createVisitor struct {
	o       Options
	r       *Rules
	s       *Sandbox
	mu      sync.Mutex
	stores  map[string]string // sandbox object store -> the real one
	dotgits []string          // .git files and links, relative to the root
	gitdirs []string          // copied git directories holding a config, in the sandbox
	// gitLinks are links in git directories that lead out of the
	// project, by path relative to the root, to where they lead.
	gitLinks map[string]string
	readonly []statEntry // the read-only files
	// known are the git directories under another name: the sandbox's
	// (those the root's .git names), and those nested .git files name,
	// added as the copy meets them (adoptGitDirs).
	known atomic.Pointer[gitDirs]
}

func newCreateVisitor(o Options, r *Rules, s *Sandbox) *createVisitor {
	v := &createVisitor{o: o, r: r, s: s, stores: map[string]string{}, gitLinks: map[string]string{}}
	g := s.gitDirs
	v.known.Store(&g)
	return v
}

func (v *createVisitor) entry(rel, dir, name string, st warmStat) bool {
	isDir := st.mode&unix.S_IFMT == unix.S_IFDIR
	if name == ".git" && !isDir {
		// A .git file or link names a git directory, maybe the real
		// repository's: sealGitFiles decides what the sandbox gets.
		// One it names inside the project under another name is a git
		// directory of the project.
		named := namedGitDirs(v.o.Root, filepath.Join(dir, name))
		v.mu.Lock()
		v.dotgits = append(v.dotgits, rel)
		if g := *v.known.Load(); len(named) > 0 {
			g = g.add(named...)
			v.known.Store(&g)
		}
		v.mu.Unlock()
		return true
	}
	known := *v.known.Load()
	if inner, in := known.gitInner(rel); in {
		src := filepath.Join(dir, name)
		if skip, store := gitSkip(inner, src, isDir); skip {
			if store {
				v.mu.Lock()
				v.stores[filepath.Join(v.s.Tree, filepath.FromSlash(rel))] = src
				v.mu.Unlock()
			}
			return true
		}
		return false
	}
	if known.isGitDir(rel) {
		return false // a git directory: copied, but for its objects
	}
	if dotGitAlias(name) {
		return true // a name taken for .git: never copied (dotgit.go)
	}
	if v.r.ignoredLeaf(rel, isDir) || (!isDir && v.r.hidden(rel)) {
		v.mu.Lock()
		v.s.skipped = append(v.s.skipped, rel)
		v.mu.Unlock()
		return true
	}
	return false
}

// done records what the copy made of one directory in base: regular
// files (the manifest's), directories and links; but git's own.
func (v *createVisitor) done(batch []statEntry) {
	known := *v.known.Load()
	if _, in := known.gitInner(batch[0].rel); in {
		// git's own files are never synced; a git directory's config may
		// name its work tree (sealWorktrees).
		has := 0
		for i := range batch {
			if batch[i].st.mode&unix.S_IFMT != unix.S_IFREG {
				continue
			}
			switch path.Base(batch[i].rel) {
			case "config", "HEAD":
				has++
			}
		}
		if has == 2 {
			v.mu.Lock()
			v.gitdirs = append(v.gitdirs, filepath.Join(v.s.Tree, filepath.FromSlash(path.Dir(batch[0].rel))))
			v.mu.Unlock()
		}
		return
	}
	// One batch per directory, its files, directories and links
	// together, so that the warm state saved from base has each
	// directory's entries in one run (readWarmState).
	kept := batch[:0]
	files, links := 0, 0
	var ro []statEntry
	var dirs []string
	for _, e := range batch {
		switch e.st.mode & unix.S_IFMT {
		case unix.S_IFDIR:
			if known.isGitDir(e.rel) {
				continue // a git directory, copied but git's own
			}
			dirs = append(dirs, e.rel)
		case unix.S_IFREG:
			files++
			if v.r.isReadonly(e.rel) {
				ro = append(ro, e)
			}
		case unix.S_IFLNK:
			links++
		}
		kept = append(kept, e)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.s.base.add(kept)
	v.s.baseFiles += files
	v.s.baseLinks += links
	v.s.dirs = append(v.s.dirs, dirs...)
	for _, e := range ro {
		v.s.readonly[e.rel] = true
	}
	v.readonly = append(v.readonly, ro...)
}

func (v *createVisitor) link(rel, src, target string) (string, bool) {
	if _, in := v.known.Load().gitInner(rel); in {
		// A link in a git directory that leads out of the project (the
		// layout git-new-workdir makes: refs, objects, config linked to
		// another clone) would lead git in the sandbox to a real
		// repository: what it leads to is copied instead (sealGitLinks).
		if real, err := filepath.EvalSymlinks(src); err == nil {
			if _, inside := pathutil.Rel(v.o.Root, real); !inside {
				v.mu.Lock()
				v.gitLinks[rel] = real
				v.mu.Unlock()
				return "", false
			}
		}
	}
	// A link into the real tree would let the harness write there: it is
	// made again pointing into the sandbox (sealLink).
	t, sealed := sealLink(v.o.Root, v.s.Tree, src, target)
	if !sealed {
		return target, true
	}
	v.mu.Lock()
	v.s.links[rel] = t
	v.mu.Unlock()
	return t, true
}

// adoptGitDirs makes the git directories under another name that the
// copy found as it went (a nested .git names them) what those known before
// it are, for what the copy recorded of them before: their entries leave
// base, the directories, the read-only files, the links made again and
// the paths left out, and their config is pointed at the sandbox
// (sealWorktrees). Their objects stay copied (only those known before the
// copy are shared by alternates): git works the same.
func (v *createVisitor) adoptGitDirs() {
	s := v.s
	all := *v.known.Load()
	var late gitDirs
	for _, d := range all {
		if _, ok := s.gitDirs.inner(d); !ok {
			late = append(late, d)
		}
	}
	s.gitDirs = all
	if len(late) == 0 {
		return
	}
	in := func(rel string) bool { _, ok := late.inner(rel); return ok }
	var base entryList
	files, links := 0, 0
	for _, b := range s.base.batches {
		kept := make([]statEntry, 0, len(b))
		for _, e := range b {
			if in(e.rel) {
				continue
			}
			switch e.st.mode & unix.S_IFMT {
			case unix.S_IFREG:
				files++
			case unix.S_IFLNK:
				links++
			}
			kept = append(kept, e)
		}
		base.add(kept)
	}
	s.base, s.baseFiles, s.baseLinks = base, files, links
	s.dirs = slices.DeleteFunc(s.dirs, in)
	s.skipped = slices.DeleteFunc(s.skipped, in)
	v.readonly = slices.DeleteFunc(v.readonly, func(e statEntry) bool { return in(e.rel) })
	for rel := range s.readonly {
		if in(rel) {
			delete(s.readonly, rel)
		}
	}
	for rel := range s.links {
		if in(rel) {
			delete(s.links, rel)
		}
	}
	for _, d := range late {
		dir := filepath.Join(s.Tree, filepath.FromSlash(d))
		head, err1 := os.Lstat(filepath.Join(dir, "HEAD"))
		cfg, err2 := os.Lstat(filepath.Join(dir, "config"))
		if err1 == nil && err2 == nil && head.Mode().IsRegular() && cfg.Mode().IsRegular() {
			v.gitdirs = append(v.gitdirs, dir)
		}
	}
}

// makeManifest makes the manifest of the files and links in base, in
// the background: a warm run's harness need not wait for it, and a
// harness runs for longer than it takes.
func (s *Sandbox) makeManifest() {
	done := make(chan struct{})
	s.manifestOK = done
	go func() {
		defer close(done)
		m := make(map[string]entry, s.baseFiles)
		l := make(map[string]entry, s.baseLinks)
		for e := range s.base.all() {
			switch e.st.mode & unix.S_IFMT {
			case unix.S_IFREG:
				m[e.rel] = entryOf(&e.st)
			case unix.S_IFLNK:
				l[e.rel] = entryOf(&e.st)
			}
		}
		s.manifest, s.realLinks = m, l
	}()
}

// entryOf is the manifest entry of an entry of stat st.
func entryOf(st *warmStat) entry {
	return entry{size: st.size, mtime: st.mtime.Nano(), mode: fileMode(st.mode)}
}

// realFiles returns the manifest, once it is made.
func (s *Sandbox) realFiles() map[string]entry {
	if s.manifestOK != nil {
		<-s.manifestOK
	}
	return s.manifest
}

// copyLinks returns the real tree's links at copy time, once the
// manifest is made.
func (s *Sandbox) copyLinks() map[string]entry {
	if s.manifestOK != nil {
		<-s.manifestOK
	}
	if s.realLinks == nil {
		s.realLinks = map[string]entry{}
	}
	return s.realLinks
}

// Skipped returns the paths, relative to the root, left out of the copy.
func (s *Sandbox) Skipped() []string { return s.skipped }

// quietGit marks the tracked files left out of the copy skip-worktree in
// the sandbox's index, so that git status there does not report them as
// deleted. It does nothing without a .git directory or a git binary.
func (s *Sandbox) quietGit() error {
	if g, _ := s.gitDir(); g == "" || len(s.skipped) == 0 {
		return nil
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil
	}
	out, err := s.git(nil, "ls-files", "-z")
	if err != nil {
		return nil // not a usable repository: nothing to keep quiet
	}
	var tracked []string
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if f == "" {
			continue
		}
		i := sort.SearchStrings(s.skipped, f)
		left := i < len(s.skipped) && s.skipped[i] == f
		if !left {
			for _, sk := range s.skipped {
				if strings.HasPrefix(f, sk+"/") {
					left = true
					break
				}
			}
		}
		if left {
			tracked = append(tracked, f)
		}
	}
	if len(tracked) == 0 {
		return nil
	}
	input := []byte(strings.Join(tracked, "\x00") + "\x00")
	if _, err := s.git(input, "update-index", "--skip-worktree", "-z", "--stdin"); err != nil {
		return fmt.Errorf("cannot mark hidden files in the sandbox's git index: %w", err)
	}
	return nil
}

func (s *Sandbox) git(stdin []byte, args ...string) ([]byte, error) {
	// Without the caller's GIT_* variables: a GIT_DIR would point git at
	// the real repository (gitRun).
	return gitRun(s.Tree, stdin, args...)
}

// sealLink decides how the symlink src of the real tree (under root),
// whose target is target, is made in the sandbox tree, so that no link in
// the sandbox leads into the real tree:
//   - a relative target that stays inside the project, read as text, is
//     copied as it is: it leads to the sandbox's copy (a link it goes
//     through is sealed in its turn);
//   - a link that otherwise leads into the project (an absolute target
//     inside it, or one through another name of it: a symlinked alias, a
//     relative path out and back in) points to the same place in the
//     sandbox, by an absolute path;
//   - a link that leads out of the project points to its real target by
//     an absolute path, so that it works from the sandbox as from the
//     real tree (a relative one would dangle).
//
// ok is false when the link is copied as it is.
func sealLink(root, tree, src, target string) (string, bool) {
	lexical := target
	if !filepath.IsAbs(lexical) {
		lexical = filepath.Join(filepath.Dir(src), target)
		if _, in := pathutil.Rel(root, lexical); in {
			return "", false
		}
	}
	lexical = filepath.Clean(lexical)
	if rel, in := pathutil.Rel(root, lexical); in {
		return filepath.Join(tree, rel), true
	}
	// Where it leads, through every link on the way.
	if real, err := resolvePrefix(lexical); err == nil {
		if rel, in := pathutil.Rel(root, real); in {
			return filepath.Join(tree, rel), true
		}
	}
	if filepath.IsAbs(target) {
		return "", false
	}
	return lexical, true
}

// resolvePrefix resolves the symlinks of path's longest existing prefix and
// joins the rest, so that a path that does not exist yet (a build output
// below a symlinked directory) is resolved too.
func resolvePrefix(path string) (string, error) {
	var rest []string
	p := filepath.Clean(path)
	for {
		if real, err := pathutil.Real(p); err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				real = filepath.Join(real, rest[i])
			}
			return real, nil
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", fmt.Errorf("%s: no part of it exists", path)
		}
		rest = append(rest, filepath.Base(p))
		p = parent
	}
}

// Park moves the sandbox tree to warm, for a later Create with
// Options.Warm to refresh instead of copying; a tree already there is
// replaced. The rest of the sandbox directory stays for Remove.
func (s *Sandbox) Park(warm string) error {
	if s.Overlay != nil {
		return fmt.Errorf("cannot keep the sandbox as a warm tree: %w", ErrOverlay)
	}
	if err := os.MkdirAll(filepath.Dir(warm), 0o700); err != nil {
		return err
	}
	os.Remove(stateFile(warm))
	if _, err := os.Lstat(warm); err == nil {
		old := warm + ".old-" + filepath.Base(s.Dir)
		if err := os.Rename(warm, old); err != nil {
			return err
		}
		if err := removeAll(old); err != nil {
			return err
		}
	}
	if err := os.Rename(s.Tree, warm); err != nil {
		return err
	}
	if s.after != nil {
		// A cache: without it the next refresh stats the sandbox.
		_ = saveWarmState(warm, s.after.all())
	}
	return nil
}

// Remove deletes the sandbox directory, read-only files included, and
// an overlay's upper and work directories, unlistable ones included.
func (s *Sandbox) Remove() error {
	s.journal.close()
	s.journal = nil
	if s.Overlay != nil {
		return s.removeOverlay()
	}
	return removeAll(s.Dir)
}

// RemoveDir deletes a sandbox directory that no Sandbox of this process
// has open (a session's, a warm tree's), read-only files and directories
// included.
func RemoveDir(dir string) error { return removeAll(dir) }

// removeAll deletes dir and everything below it, read-only directories
// included.
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	// A read-only directory: make every directory writable, then again.
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(path, 0o755)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
