package session

// Extend mode: folding the repository's instruction files into the one
// materialized in the sandbox. It is session's, not mount's, because it
// knows harnesses' discovery (package discover); mount only gets the paths
// to hide (mount.Options.HidePaths) and gives its copy rules
// (mount.NewRules).

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
	"github.com/seed-3bc194a6/workforce/mount"
)

// extendSeparator goes between the repository's instruction text and the
// persona's in extend mode.
const extendSeparator = "\n\n---\n\n"

// Extend is how extend mode gives a harness, started in the sandbox, the
// instruction text it would have loaded in the user's real directory,
// followed by the persona's.
//
// The files the harness loads at start in the real directory are folded,
// in the harness's own load order and joining, into the one file
// materialized in the sandbox's working directory, before a line "---"
// and the persona text (extendSeparator), and only those files are hidden
// in the sandbox. Every other instruction file stays visible, so that what
// a harness loads on demand (Claude Code reads a nested CLAUDE.md when it
// reads a file in that directory; opencode the instructions of a directory
// it reads in) works in the sandbox as in the real tree. One exception
// keeps the start text exact: a file that would take a hidden file's place
// at start (an AGENTS.md beside a folded AGENTS.override.md, which codex
// would then load) is hidden too; the plan finds these by running the harness's
// discovery on the sandbox as it will be (mount's copy rules, the hidden
// files, the materialized one), until nothing but the materialized file
// and the files above the sandbox loads.
//
// Files the harness reads anyway are not folded: global files (from the
// home directory, which the harness reads itself) and files in the
// directories above the sandbox that the harness walks into and that the
// real directory would have given too. Files above the sandbox that the
// real directory would not have given cannot be hidden without writing
// outside the sandbox; they are reported in Extra.
type Extend struct {
	// Real is what the harness loads in the real directory.
	Real *discover.Result `json:"real"`
	// Folded are the real files whose text is in the materialized file.
	Folded []string `json:"folded"`
	// LoadedAnyway are real files the harness reads itself in the sandbox.
	LoadedAnyway []string `json:"loadedAnyway"`
	// Extra are files above the sandbox the harness would read there and
	// the real directory would not give.
	Extra []string `json:"extra"`
	// Surfaced are the files, relative to the project root with slashes,
	// hidden besides the folded ones: those of the convention in the
	// working directory that are not folded (the materialized file takes
	// their place; blank or empty, they add nothing, and one could shadow
	// it), and those that would take a folded file's place at start.
	Surfaced []string `json:"surfaced"`
	// Hide are the paths, relative to the project root with slashes, to
	// leave out of the sandbox: the folded files inside the project, and
	// the surfaced ones.
	Hide []string `json:"hide"`
	// Text is the materialized file's content.
	Text string `json:"text"`
}

// planExtend computes extend mode for profile p and the sandbox of o
// (o.Cwd is the user's real directory): tree is the sandbox copy of
// o.Root (it need not exist yet), name the materialized file's name, text
// the persona's, and do the harness's discovery options.
func planExtend(p discover.Profile, o mount.Options, tree, name, text string, do discover.Options) (*Extend, error) {
	real, err := discover.Chain(p, o.Cwd, do)
	if err != nil {
		return nil, err
	}
	markers := p.Markers
	if do.Markers != nil {
		markers = do.Markers
	}
	e := &Extend{Real: real, Folded: []string{}, LoadedAnyway: []string{}, Extra: []string{}, Hide: []string{}}
	aboveFiles := aboveSandbox(p, tree, hasMarker(o.Root, markers), name)
	above := map[string]bool{}
	for _, f := range aboveFiles {
		above[f] = true
	}
	var texts []string
	inReal := map[string]bool{}
	hide := map[string]bool{}
	for _, f := range real.Files {
		inReal[f.Canonical] = true
		switch {
		case f.Scope == discover.ScopeGlobal || above[f.Canonical]:
			e.LoadedAnyway = append(e.LoadedAnyway, f.Path)
		default:
			e.Folded = append(e.Folded, f.Path)
			texts = append(texts, f.Text)
			// The file, and its target when it is reached through a
			// symlink (a symlinked .claude directory): the sandbox keeps
			// links, so the target would show it again.
			for _, path := range []string{f.Path, f.Canonical} {
				if rel, ok := pathutil.Rel(o.Root, path); ok {
					hide[filepath.ToSlash(rel)] = true
				}
			}
		}
	}
	for _, f := range aboveFiles {
		if !inReal[f] {
			e.Extra = append(e.Extra, f)
		}
	}
	e.Text = text
	if len(texts) > 0 {
		e.Text = strings.Join(texts, "\n\n") + extendSeparator + text
	}
	// In the working directory, the file of the materialized name and
	// those that could shadow it are hidden too when they are not folded
	// (blank or empty ones, a symlink): the materialized file replaces the
	// one of its name, and no other may shadow it (codex takes a blank
	// AGENTS.override.md over AGENTS.md, and loads nothing from it).
	var replaced []string
	wdRel, err := filepath.Rel(o.Root, o.Cwd)
	if err != nil {
		return nil, err
	}
	for _, n := range shadowing(p, name) {
		rel := filepath.ToSlash(filepath.Join(wdRel, filepath.FromSlash(n)))
		if fi, err := os.Lstat(filepath.Join(o.Cwd, filepath.FromSlash(n))); err == nil && !fi.IsDir() && !hide[rel] {
			hide[rel] = true
			replaced = append(replaced, rel)
		}
	}
	surfaced, err := surfacing(p, o, tree, name, e.Text, do, hide)
	if err != nil {
		return nil, err
	}
	e.Surfaced = append(replaced, surfaced...)
	sort.Strings(e.Surfaced)
	for rel := range hide {
		e.Hide = append(e.Hide, rel)
	}
	sort.Strings(e.Hide)
	return e, nil
}

// shadowing returns name and the candidate names of p that, present in
// the same directory, would be taken instead of it: the names before it
// when a directory or the walk gives one name only.
func shadowing(p discover.Profile, name string) []string {
	out := []string{name}
	if p.Select == discover.AllInDir {
		return out
	}
	for _, n := range p.Names {
		if n == name {
			break
		}
		out = append(out, n)
	}
	return out
}

// surfacing adds to hide the files of the project that the harness would
// load at start in the sandbox besides the materialized file: files that a
// hidden one shadowed. It runs the harness's discovery on the sandbox as
// it will be (the project's files, less the ignored and hidden ones, plus
// the materialized file) until nothing new loads.
func surfacing(p discover.Profile, o mount.Options, tree, name, text string, do discover.Options, hide map[string]bool) ([]string, error) {
	r, err := mount.NewRules(o)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(o.Root, o.Cwd)
	if err != nil {
		return nil, err
	}
	surfaced := []string{}
	workdir := filepath.Join(tree, rel)
	box := &sandboxFS{root: o.Root, tree: tree, rules: r, hide: hide,
		mat: filepath.Join(workdir, name), text: []byte(text), workdir: workdir}
	do.FS, do.NoGlobals = box, true
	// Each round hides at least one more file, so this ends; the bound is
	// a guard.
	for range 64 {
		res, err := discover.Chain(p, workdir, do)
		if err != nil {
			return nil, err
		}
		more, loaded := false, false
		for _, f := range res.Files {
			if f.Path == box.mat {
				loaded = true
				continue
			}
			if rel, ok := pathutil.Rel(tree, f.Path); ok && !hide[filepath.ToSlash(rel)] {
				hide[filepath.ToSlash(rel)], more = true, true
				surfaced = append(surfaced, filepath.ToSlash(rel))
			}
		}
		if !more {
			if !loaded && strings.TrimSpace(text) != "" {
				return nil, fmt.Errorf("extend: %s would not load the materialized %s in the sandbox", p.Harness, name)
			}
			sort.Strings(surfaced)
			return surfaced, nil
		}
	}
	return nil, fmt.Errorf("extend: the files %s would load in the sandbox do not settle", p.Harness)
}

// sandboxFS is the file system as the harness will see it in a sandbox
// that is not made yet: below tree, the project's files at root, less the
// ignored and hidden ones, plus the materialized file; elsewhere, the real
// file system.
type sandboxFS struct {
	root, tree string
	rules      *mount.Rules
	hide       map[string]bool
	mat        string
	text       []byte
	// workdir is the sandbox's working directory, made even when the copy
	// leaves it out (a working directory below node_modules).
	workdir string
}

// real maps a path below the tree to the project; ok is false for a path
// the sandbox will not have.
func (b *sandboxFS) real(name string) (path string, in, ok bool) {
	rel, in := pathutil.Rel(b.tree, name)
	if !in {
		return name, false, true
	}
	if rel == "." {
		return b.root, true, true
	}
	slash := filepath.ToSlash(rel)
	if b.hide[slash] {
		return "", true, false
	}
	path = filepath.Join(b.root, rel)
	fi, err := os.Lstat(path)
	if err != nil {
		return path, true, true // absent anyway
	}
	if _, up := pathutil.Rel(name, b.workdir); up && fi.IsDir() {
		return path, true, true
	}
	if b.rules.Ignored(slash, fi.IsDir()) {
		return "", true, false
	}
	return path, true, true
}

func (b *sandboxFS) Stat(name string) (fs.FileInfo, error) {
	if name == b.mat {
		return matInfo{name: filepath.Base(name), size: int64(len(b.text))}, nil
	}
	path, _, ok := b.real(name)
	if !ok {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return os.Stat(path)
}

func (b *sandboxFS) ReadFile(name string, limit int) ([]byte, int64, error) {
	if name == b.mat {
		data := b.text
		if limit >= 0 && limit < len(data) {
			data = data[:limit]
		}
		return data, int64(len(b.text)), nil
	}
	path, _, ok := b.real(name)
	if !ok {
		return nil, 0, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return discover.OS.ReadFile(path, limit)
}

func (b *sandboxFS) EvalSymlinks(name string) (string, error) {
	if name == b.mat {
		return name, nil
	}
	path, in, ok := b.real(name)
	if !ok {
		return "", &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrNotExist}
	}
	if !in {
		return filepath.EvalSymlinks(path)
	}
	c, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	if rel, ok := pathutil.Rel(b.root, c); ok {
		return filepath.Join(b.tree, rel), nil
	}
	return c, nil
}

// matInfo describes the materialized file before it is written.
type matInfo struct {
	name string
	size int64
}

func (m matInfo) Name() string       { return m.name }
func (m matInfo) Size() int64        { return m.size }
func (m matInfo) Mode() fs.FileMode  { return 0o644 }
func (m matInfo) ModTime() time.Time { return time.Time{} }
func (m matInfo) IsDir() bool        { return false }
func (m matInfo) Sys() any           { return nil }

// aboveSandbox lists, canonical, the instruction files the harness of p
// would read in the directories above the sandbox tree: only profiles whose
// walk is not stopped by the tree's own root do. For profiles where the
// first name with a match wins, the materialized file (name) wins, so only
// files of that name count.
func aboveSandbox(p discover.Profile, tree string, treeHasRoot bool, name string) []string {
	escapes := p.Root == discover.BelowFilesystemRoot || (p.Root == discover.MarkerOrFilesystemRoot && !treeHasRoot)
	if !escapes {
		return nil
	}
	names := p.Names
	if p.Select == discover.FirstNameWins || p.Select == discover.FirstMatch {
		names = []string{name}
	}
	var dirs []string
	for d := filepath.Dir(tree); ; d = filepath.Dir(d) {
		if d == filepath.Dir(d) {
			if p.Root != discover.BelowFilesystemRoot {
				dirs = append(dirs, d)
			}
			break
		}
		dirs = append(dirs, d)
	}
	var out []string
	for i := len(dirs) - 1; i >= 0; i-- {
		for _, n := range names {
			path := filepath.Join(dirs[i], filepath.FromSlash(n))
			if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
				if c, err := filepath.EvalSymlinks(path); err == nil {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// hasMarker reports whether dir holds one of markers.
func hasMarker(dir string, markers []string) bool {
	for _, m := range markers {
		if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
			return true
		}
	}
	return false
}
