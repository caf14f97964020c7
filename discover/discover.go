// Package discover answers: which instruction files does a harness load
// when it starts in a directory, and in what text?
//
// Each harness's rules are a Profile, kept as data (candidate names, which
// of them load, walk direction, root markers, byte budget, global files,
// rendering): codex, opencode, opencode-nearest, claude and agents. Chain
// applies one profile to a directory. It stats each candidate name in each
// directory between the root and the start directory, never lists a
// directory, so its cost grows with depth times names, not with the number
// of files in the tree.
//
// Pinned answers where the harnesses' own documentation is silent:
//   - The start directory is made absolute and its symlinks resolved before
//     anything else; roots, walks and reported paths use the canonical
//     form, and comparisons are by whole path segments (app is not a prefix
//     of app2).
//   - A root marker counts when it exists after following symlinks: .git as
//     a file (worktrees, submodules) counts, a dangling .git symlink does not.
//   - A candidate counts when it is a regular file after following symlinks:
//     a symlinked AGENTS.md loads (its path is reported as found, the target
//     as canonical), a dangling symlink, a directory or a FIFO named
//     AGENTS.md does not (and is never opened, so a FIFO cannot hang).
//   - codex: in each directory the first candidate that is a regular file
//     is taken; if its text is blank after trimming white space the
//     directory contributes nothing (no fallback to AGENTS.md after a blank
//     AGENTS.override.md). The byte budget counts the bytes read from
//     project files only; the file that crosses it is cut at the budget and
//     later files are not read. Bytes that are not valid UTF-8, including a
//     character cut by the budget, become U+FFFD, as the harness's lossy
//     decoding does. A byte order mark and CRLF line ends are kept as they
//     are.
//   - opencode asks git for the worktree root; the profile takes the nearest
//     .git instead, which is the same for any repository git accepts.
//   - opencode files are loaded as they are, blank ones included, but an
//     empty file (no bytes at all) contributes no block, though its name
//     still wins: an empty AGENTS.md beside a CLAUDE.md loads nothing at
//     all; blocks are joined by a single newline, project files (nearest
//     first) before globals (checked against opencode 1.18 by make e2e).
//   - claude: the global file comes first, then root-most directories first;
//     when no CLAUDE.md, .claude/CLAUDE.md or CLAUDE.local.md is found on the
//     whole walk, the AGENTS.md files are read instead (a blank CLAUDE.md
//     counts as found);
//     each file's text is trimmed of surrounding white space and blank files
//     are skipped (checked against Claude Code 2.1 by make e2e); a file
//     reached both as global and as project file loads once.
//   - gemini: GEMINI.md and the names of its context.fileName in every
//     directory from the root (its memoryBoundaryMarkers, .git by default;
//     without one, the start directory alone) down to the start directory,
//     each file once (the first link to one file, in walk order), loaded in
//     the order of their paths, not the walk's; @path imports inlined
//     (gemini.go); trimmed, blank files skipped; then the global files
//     first, every name in <gemini home>/.gemini. Its settings (the names,
//     the markers) are read for the start directory (gemini.go), unless
//     Options.Names says them (Options.ForDir).
//   - agents: the root is CODELIA_AGENTS_ROOT when set, else the nearest
//     ancestor with a marker (CODELIA_AGENTS_MARKERS, comma-separated,
//     replaces the default .codelia, .git, .jj); maxFiles (16) and maxBytes
//     (64 KiB) drop whole files, keeping the files nearest the start
//     directory, which are the most specific.
//   - A file that cannot be read (permissions, a race) is skipped and noted
//     in Result.Problems; the rest still loads.
package discover

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/seed-3bc194a6/workforce/internal/pathutil"
)

// FS is the file system discovery reads; tests wrap it to count calls.
type FS interface {
	// Stat follows symlinks.
	Stat(name string) (fs.FileInfo, error)
	// ReadFile reads at most limit bytes of a regular file (all when limit
	// is negative) and returns them with the file's size.
	ReadFile(name string, limit int) (data []byte, size int64, err error)
	EvalSymlinks(path string) (string, error)
}

// OS is the real file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) Stat(name string) (fs.FileInfo, error)    { return os.Stat(name) }
func (osFS) EvalSymlinks(path string) (string, error) { return pathutil.Real(path) }

func (osFS) ReadFile(name string, limit int) ([]byte, int64, error) {
	// O_NONBLOCK keeps a FIFO swapped in after the Stat from blocking.
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s is not a regular file", name)
	}
	var r io.Reader = f
	if limit >= 0 {
		r = io.LimitReader(f, int64(limit))
	}
	data, err := io.ReadAll(r)
	return data, fi.Size(), err
}

// Options are the inputs of discovery besides the start directory. Use
// FromEnv for the real environment.
type Options struct {
	// Home is the user's home directory (global files of claude and
	// opencode).
	Home string
	// CodexHome is $CODEX_HOME; empty means Home/.codex.
	CodexHome string
	// GeminiHome is gemini's home ($GEMINI_CLI_HOME); empty means Home.
	GeminiHome string
	// Names replace the profile's candidate names when not nil (for
	// gemini: context.fileName's, then GEMINI.md).
	Names []string
	// Getenv is the environment, for a profile whose harness's own
	// settings change its names and root markers (Profile.Settings):
	// Chain reads them for the start directory unless Names is set. Nil
	// reads none.
	Getenv func(string) string
	// Markers replace the profile's root markers when not nil.
	Markers []string
	// Root, when set, is the project root (CODELIA_AGENTS_ROOT).
	Root string
	// MaxBytes replaces the profile's byte budget when positive.
	MaxBytes int
	// Fallbacks are extra candidate names tried after the profile's own
	// (codex's project_doc_fallback_filenames).
	Fallbacks []string
	// NoGlobals leaves global files out.
	NoGlobals bool
	// FS is the file system; nil means OS.
	FS FS
}

// FromEnv returns the options the real harness would see for profile p:
// HOME, CODEX_HOME, for gemini GEMINI_CLI_HOME and its settings (read by
// Chain for the start directory: Options.Getenv), and for the agents
// profile CODELIA_AGENTS_ROOT and CODELIA_AGENTS_MARKERS.
func FromEnv(p Profile, getenv func(string) string) Options {
	o := Options{Home: getenv("HOME"), CodexHome: getenv("CODEX_HOME")}
	if o.Home == "" {
		o.Home, _ = os.UserHomeDir()
	}
	if p.Settings == geminiHarness {
		o.GeminiHome = GeminiHome(getenv)
		if o.GeminiHome == "" {
			o.GeminiHome = o.Home
		}
		o.Getenv = getenv
	}
	if p.Name == "agents" {
		o.Root = getenv("CODELIA_AGENTS_ROOT")
		if m := getenv("CODELIA_AGENTS_MARKERS"); m != "" {
			o.Markers = SplitList(m)
		}
	}
	return o
}

// ForDir returns o with the names and root markers that the harness's own
// settings give in dir filled in (Profile.Settings: gemini's
// context.fileName and memoryBoundaryMarkers), so that discovery in
// another directory (a sandbox copy of dir) uses the same ones.
func (o Options) ForDir(p Profile, dir string) Options {
	if o.Names != nil || p.Settings != geminiHarness || o.Getenv == nil {
		return o
	}
	c := LoadGeminiConfig(o.Getenv, dir)
	o.Names = c.FileNames
	if o.Markers == nil && c.Markers != nil {
		o.Markers = c.Markers
	}
	return o
}

// SplitList splits a comma-separated list, dropping blank entries.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Scope of a loaded file.
const (
	ScopeGlobal  = "global"
	ScopeProject = "project"
)

// File is one loaded instruction file.
type File struct {
	// Path is where the file was found: a candidate directory joined with
	// a candidate name. Canonical is the same with symlinks resolved.
	Path      string `json:"path"`
	Canonical string `json:"canonical"`
	// Dir is the directory the file belongs to (for .claude/CLAUDE.md, the
	// directory holding .claude).
	Dir   string `json:"dir"`
	Name  string `json:"name"`
	Scope string `json:"scope"`
	// Bytes is the file's size; Truncated says the budget cut it.
	Bytes     int64 `json:"bytes"`
	Truncated bool  `json:"truncated"`
	// Text is what the file contributes.
	Text string `json:"-"`
}

// Result is what a harness loads when started in Dir.
type Result struct {
	Profile string `json:"profile"`
	// Dir is the canonical start directory; Root the project root the walk
	// stops at ("/" when the walk may reach the file system root).
	Dir  string `json:"dir"`
	Root string `json:"root"`
	// Files are the loaded files in load order.
	Files []File `json:"files"`
	// Dropped are files found but left out by maxFiles / maxBytes.
	Dropped []File `json:"dropped,omitempty"`
	// Problems are files that could not be read.
	Problems []string `json:"problems,omitempty"`
	// Text is the exact rendered text the harness injects; empty when no
	// file loads.
	Text string `json:"text"`
}

// ProjectFiles returns the project-scope files of r.
func (r *Result) ProjectFiles() []File {
	var out []File
	for _, f := range r.Files {
		if f.Scope == ScopeProject {
			out = append(out, f)
		}
	}
	return out
}

// Chain applies profile p to start directory dir.
func Chain(p Profile, dir string, o Options) (*Result, error) {
	fsys := o.FS
	if fsys == nil {
		fsys = OS
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	start, err := fsys.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve %s: %w", dir, err)
	}
	if fi, err := fsys.Stat(start); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	d := &discovery{p: p, o: o, fs: fsys, res: &Result{Profile: p.Name, Dir: start}}
	if o.MaxBytes > 0 {
		d.p.MaxBytes = o.MaxBytes
	}
	if o.Markers != nil {
		d.p.Markers = o.Markers
	}
	if o.Names == nil && p.Settings == geminiHarness && o.Getenv != nil {
		c := LoadGeminiConfig(o.Getenv, start)
		o.Names = c.FileNames
		if o.Markers == nil && c.Markers != nil {
			d.p.Markers = c.Markers
		}
		d.o = o
	}
	if o.Names != nil {
		d.p.Names = append([]string(nil), o.Names...)
	}
	if len(o.Fallbacks) > 0 {
		d.p.Names = append(append([]string(nil), d.p.Names...), o.Fallbacks...)
	}
	if err := d.findRoot(); err != nil {
		return nil, err
	}
	d.project()
	if !o.NoGlobals {
		d.globals()
	}
	d.res.Text = render(d.p, d.res)
	return d.res, nil
}

type discovery struct {
	p    Profile
	o    Options
	fs   FS
	res  *Result
	dirs []string // root to start
}

func (d *discovery) findRoot() error {
	start := d.res.Dir
	switch {
	case d.o.Root != "":
		root, err := d.fs.EvalSymlinks(d.o.Root)
		if err != nil {
			return fmt.Errorf("cannot resolve root %s: %w", d.o.Root, err)
		}
		if !pathutil.Within(root, start) {
			return fmt.Errorf("root %s does not contain %s", root, start)
		}
		d.res.Root = root
	case d.p.Root == BelowFilesystemRoot:
		d.res.Root = string(filepath.Separator)
	default:
		d.res.Root = d.markerRoot(start)
		if d.res.Root == "" {
			if d.p.Root == MarkerRoot {
				d.res.Root = start
			} else {
				d.res.Root = string(filepath.Separator)
			}
		}
	}
	for dir := start; ; dir = filepath.Dir(dir) {
		if d.p.Root == BelowFilesystemRoot && d.o.Root == "" && dir == filepath.Dir(dir) {
			break // not "/" itself
		}
		d.dirs = append(d.dirs, dir)
		if dir == d.res.Root || dir == filepath.Dir(dir) {
			break
		}
	}
	// d.dirs is start..root; make it root..start.
	for i, j := 0, len(d.dirs)-1; i < j; i, j = i+1, j-1 {
		d.dirs[i], d.dirs[j] = d.dirs[j], d.dirs[i]
	}
	return nil
}

func (d *discovery) markerRoot(start string) string {
	for dir := start; ; dir = filepath.Dir(dir) {
		for _, m := range d.p.Markers {
			if _, err := d.fs.Stat(filepath.Join(dir, m)); err == nil {
				return dir
			}
		}
		if dir == filepath.Dir(dir) {
			return ""
		}
	}
}

// candidate returns the file for name in dir when it is a regular file.
func (d *discovery) candidate(dir, name, scope string) (File, bool) {
	path := filepath.Join(dir, filepath.FromSlash(name))
	fi, err := d.fs.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return File{}, false
	}
	return File{Path: path, Dir: dir, Name: name, Scope: scope, Bytes: fi.Size()}, true
}

// read fills f.Text with at most limit bytes (all when negative) and
// returns the number of bytes read; ok is false when the file could not be
// read.
func (d *discovery) read(f *File, limit int) (n int, ok bool) {
	data, size, err := d.fs.ReadFile(f.Path, limit)
	if err != nil {
		d.res.Problems = append(d.res.Problems, fmt.Sprintf("%s: %v", f.Path, unwrapPath(err)))
		return 0, false
	}
	f.Bytes = size
	f.Truncated = limit >= 0 && int64(len(data)) < size
	f.Text = strings.ToValidUTF8(string(data), "\uFFFD")
	if d.p.Imports {
		f.Text = geminiImports(d.fs, f.Text, filepath.Dir(f.Path), d.p.Markers)
	}
	if d.p.Trim {
		f.Text = strings.TrimSpace(f.Text)
	}
	if c, err := d.fs.EvalSymlinks(f.Path); err == nil {
		f.Canonical = c
	} else {
		f.Canonical = f.Path
	}
	return len(data), true
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// skip reports whether a file's text contributes nothing: blank, for
// profiles that skip blank files, or empty, for those that skip empty ones.
func (d *discovery) skip(text string) bool {
	return d.p.SkipBlank && isBlank(text) || d.p.SkipEmpty && text == ""
}

func (d *discovery) project() {
	p := d.p
	switch p.Select {
	case FirstInDir:
		remaining := p.MaxBytes
		for _, dir := range d.walk() {
			for _, name := range p.Names {
				f, ok := d.candidate(dir, name, ScopeProject)
				if !ok {
					continue
				}
				limit := -1
				if p.MaxBytes > 0 {
					if remaining <= 0 {
						return
					}
					limit = remaining
				}
				if n, ok := d.read(&f, limit); ok && !d.skip(f.Text) {
					d.res.Files = append(d.res.Files, f)
					remaining -= n
				}
				break
			}
		}
	case AllInDir:
		var found []File
		for _, names := range [][]string{p.Names, p.Otherwise} {
			for _, dir := range d.walk() {
				for _, name := range names {
					if f, ok := d.candidate(dir, name, ScopeProject); ok {
						found = append(found, f)
					}
				}
			}
			if len(found) > 0 {
				break
			}
		}
		if p.SortPaths {
			found = d.sortPaths(found)
		}
		d.takeWhole(found)
	case FirstNameWins, FirstMatch:
		for _, name := range p.Names {
			var found []File
			for _, dir := range d.walk() {
				if f, ok := d.candidate(dir, name, ScopeProject); ok {
					found = append(found, f)
					if p.Select == FirstMatch {
						break
					}
				}
			}
			if len(found) > 0 {
				d.takeWhole(found)
				return
			}
		}
	}
}

// sortPaths returns found, in walk order, each file once (the first link
// to it), sorted by path: gemini's order.
func (d *discovery) sortPaths(found []File) []File {
	var out []File
	seen := map[string]bool{}
	for _, f := range found {
		id := f.Path
		if c, err := d.fs.EvalSymlinks(f.Path); err == nil {
			id = c
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// walk returns the directories in the profile's walk order.
func (d *discovery) walk() []string {
	if d.p.Walk == RootToDir {
		return d.dirs
	}
	out := make([]string, len(d.dirs))
	for i, dir := range d.dirs {
		out[len(out)-1-i] = dir
	}
	return out
}

// takeWhole reads found files, in walk order, keeping within MaxFiles and
// MaxBytes by dropping whole files; the files nearest the start directory
// are kept first.
func (d *discovery) takeWhole(found []File) {
	if d.p.MaxFiles == 0 && d.p.MaxBytes == 0 {
		for _, f := range found {
			if _, ok := d.read(&f, -1); ok && !d.skip(f.Text) {
				d.res.Files = append(d.res.Files, f)
			}
		}
		return
	}
	keep := make([]bool, len(found))
	count, total := 0, int64(0)
	nearestFirst := d.p.Walk == RootToDir
	for k := range found {
		i := k
		if nearestFirst {
			i = len(found) - 1 - k
		}
		f := found[i]
		if (d.p.MaxFiles > 0 && count >= d.p.MaxFiles) || (d.p.MaxBytes > 0 && total+f.Bytes > int64(d.p.MaxBytes)) {
			d.res.Dropped = append(d.res.Dropped, f)
			continue
		}
		keep[i] = true
		count++
		total += f.Bytes
	}
	for i, f := range found {
		if !keep[i] {
			continue
		}
		if _, ok := d.read(&f, -1); ok && !d.skip(f.Text) {
			d.res.Files = append(d.res.Files, f)
		}
	}
}

func (d *discovery) globals() {
	if d.p.GlobalDir != nil {
		d.allGlobals()
		return
	}
	var g File
	found := false
	for _, gl := range d.p.Globals {
		base := d.base(gl)
		if base == "" {
			continue
		}
		path := filepath.Join(base, filepath.FromSlash(gl.Rel))
		fi, err := d.fs.Stat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		f := File{Path: path, Dir: filepath.Dir(path), Name: filepath.Base(path), Scope: ScopeGlobal, Bytes: fi.Size()}
		if _, ok := d.read(&f, -1); !ok || d.skip(f.Text) {
			continue
		}
		g, found = f, true
		break
	}
	if !found {
		return
	}
	for i, f := range d.res.Files {
		if f.Canonical == g.Canonical {
			if d.p.Render != RenderClaude {
				return // already loaded as a project file
			}
			// claude loads the global first: drop the project copy.
			d.res.Files = append(d.res.Files[:i:i], d.res.Files[i+1:]...)
			break
		}
	}
	if d.p.Render == RenderOpencode {
		d.res.Files = append(d.res.Files, g)
	} else {
		d.res.Files = append([]File{g}, d.res.Files...)
	}
}

// base is the directory a global file's Base names.
func (d *discovery) base(gl Global) string {
	switch gl.Base {
	case "codex-home":
		if d.o.CodexHome == "" && d.o.Home != "" {
			return filepath.Join(d.o.Home, ".codex")
		}
		return d.o.CodexHome
	case "gemini-home":
		if d.o.GeminiHome == "" {
			return d.o.Home
		}
		return d.o.GeminiHome
	}
	return d.o.Home
}

// allGlobals loads every candidate name of the profile's GlobalDir that
// is a readable, not blank, regular file, in the order of the names,
// before the project files; a project file that is one of them loads
// once, as global.
func (d *discovery) allGlobals() {
	base := d.base(*d.p.GlobalDir)
	if base == "" {
		return
	}
	dir := filepath.Join(base, filepath.FromSlash(d.p.GlobalDir.Rel))
	var globals []File
	seen := map[string]bool{}
	for _, name := range d.p.Names {
		path := filepath.Join(dir, filepath.FromSlash(name))
		fi, err := d.fs.Stat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		f := File{Path: path, Dir: dir, Name: name, Scope: ScopeGlobal, Bytes: fi.Size()}
		if _, ok := d.read(&f, -1); !ok || d.skip(f.Text) || seen[f.Canonical] {
			continue
		}
		seen[f.Canonical] = true
		globals = append(globals, f)
	}
	project := d.res.Files[:0:0]
	for _, f := range d.res.Files {
		if !seen[f.Canonical] {
			project = append(project, f)
		}
	}
	d.res.Files = append(globals, project...)
}

func render(p Profile, r *Result) string {
	if len(r.Files) == 0 {
		return ""
	}
	var blocks []string
	switch p.Render {
	case RenderCodex:
		var global string
		var project []string
		for _, f := range r.Files {
			if f.Scope == ScopeGlobal {
				global = f.Text
			} else {
				project = append(project, f.Text)
			}
		}
		text := strings.Join(project, p.Join)
		switch {
		case global != "" && text != "":
			text = global + "\n\n--- project-doc ---\n\n" + text
		case global != "":
			text = global
		}
		return "# AGENTS.md instructions for " + r.Dir + "\n\n<INSTRUCTIONS>\n" + text + "\n</INSTRUCTIONS>"
	case RenderOpencode:
		for _, f := range r.Files {
			blocks = append(blocks, "Instructions from: "+f.Path+"\n"+f.Text)
		}
	case RenderClaude:
		for _, f := range r.Files {
			kind := "project instructions, checked into the codebase"
			switch {
			case f.Scope == ScopeGlobal:
				kind = "user's private global instructions for all projects"
			case f.Name == "CLAUDE.local.md":
				kind = "user's private project instructions, not checked in"
			}
			blocks = append(blocks, "Contents of "+f.Path+" ("+kind+"):\n\n"+f.Text)
		}
	case RenderAgents:
		for _, f := range r.Files {
			blocks = append(blocks, "# AGENTS.md: "+f.Path+"\n\n"+f.Text)
		}
	case RenderGemini:
		for _, f := range r.Files {
			blocks = append(blocks, "--- Context from: "+f.Path+" ---\n"+f.Text+"\n--- End of Context from: "+f.Path+" ---")
		}
	}
	return strings.Join(blocks, p.Join)
}
