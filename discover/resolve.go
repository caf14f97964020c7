package discover

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/renameio/v2"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
)

// DefaultMaxFilesPerResolve caps the files one Resolve call returns.
const DefaultMaxFilesPerResolve = 8

// State is what the resolver remembers between calls: the session's start
// directory, root and markers, the initial chain, and every AGENTS.md file
// already reported with the modification time it had.
type State struct {
	Version int      `json:"version"`
	Cwd     string   `json:"cwd"`
	Root    string   `json:"root"`
	Markers []string `json:"markers"`
	// Initial is the chain loaded at session start, root first.
	Initial []string `json:"initial"`
	// Files maps each known file to its modification time.
	Files map[string]time.Time `json:"files"`
}

// Resolved is one file a Resolve call reports.
type ResolvedFile struct {
	Path string `json:"path"`
	// Reason is "new" or "changed".
	Reason string `json:"reason"`
}

// Resolution is the answer of Resolve.
type Resolution struct {
	Files []ResolvedFile `json:"files"`
	// Remaining counts files that apply but were left for the next call.
	Remaining int `json:"remaining"`
}

// LoadState reads a state file; a missing file is a nil state.
func LoadState(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: not a resolver state file: %v", path, err)
	}
	if s.Version != 1 {
		return nil, fmt.Errorf("%s: state version %d, want 1", path, s.Version)
	}
	if s.Files == nil {
		s.Files = map[string]time.Time{}
	}
	return &s, nil
}

// Save writes the state atomically.
func (s *State) Save(path string) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return renameio.WriteFile(path, append(data, '\n'), 0o644, renameio.WithTempDir(filepath.Dir(path)))
}

// NewState records the initial chain of the agents profile p for cwd.
func NewState(p Profile, cwd string, o Options) (*State, error) {
	res, err := Chain(p, cwd, o)
	if err != nil {
		return nil, err
	}
	markers := o.Markers
	if markers == nil {
		markers = p.Markers
	}
	s := &State{Version: 1, Cwd: res.Dir, Root: res.Root, Markers: slices.Clone(markers), Files: map[string]time.Time{}}
	fsys := o.FS
	if fsys == nil {
		fsys = OS
	}
	for _, f := range res.ProjectFiles() {
		s.Initial = append(s.Initial, f.Path)
		if fi, err := fsys.Stat(f.Path); err == nil {
			s.Files[f.Path] = fi.ModTime()
		}
	}
	return s, nil
}

// Resolve returns the AGENTS.md files (names of profile p) that apply to
// paths and are new to the state or changed since recorded, root first, at
// most max of them; it records the ones it returns. Paths outside the
// session's root get nothing.
func (s *State) Resolve(p Profile, paths []string, max int, o Options) (*Resolution, error) {
	fsys := o.FS
	if fsys == nil {
		fsys = OS
	}
	if max <= 0 {
		max = DefaultMaxFilesPerResolve
	}
	var pending []ResolvedFile
	seen := map[string]bool{}
	mtimes := map[string]time.Time{}
	for _, path := range paths {
		dir, err := existingDir(fsys, path)
		if err != nil {
			return nil, err
		}
		if !pathutil.Within(s.Root, dir) {
			continue
		}
		var chain []string
		for d := dir; ; d = filepath.Dir(d) {
			chain = append(chain, d)
			if d == s.Root || d == filepath.Dir(d) {
				break
			}
		}
		slices.Reverse(chain)
		for _, d := range chain {
			for _, name := range p.Names {
				file := filepath.Join(d, name)
				if seen[file] {
					continue
				}
				fi, err := fsys.Stat(file)
				if err != nil || !fi.Mode().IsRegular() {
					continue
				}
				seen[file] = true
				old, known := s.Files[file]
				switch {
				case !known:
					pending = append(pending, ResolvedFile{Path: file, Reason: "new"})
				case !old.Equal(fi.ModTime()):
					pending = append(pending, ResolvedFile{Path: file, Reason: "changed"})
				default:
					continue
				}
				mtimes[file] = fi.ModTime()
			}
		}
	}
	r := &Resolution{Files: []ResolvedFile{}}
	for i, f := range pending {
		if i >= max {
			r.Remaining = len(pending) - max
			break
		}
		r.Files = append(r.Files, f)
		s.Files[f.Path] = mtimes[f.Path]
	}
	return r, nil
}

// existingDir returns the canonical directory a path applies to: the path
// itself when it is a directory, else its parent; for a path that does not
// exist yet, its nearest existing ancestor.
func existingDir(fsys FS, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	for p := abs; ; p = filepath.Dir(p) {
		real, err := fsys.EvalSymlinks(p)
		if err == nil {
			if fi, err := fsys.Stat(real); err == nil && !fi.IsDir() {
				real = filepath.Dir(real)
			}
			return real, nil
		}
		if p == filepath.Dir(p) {
			return "", fmt.Errorf("cannot resolve %s: %w", path, err)
		}
	}
}

// ResolveReminder renders a resolution as the agents.resolve.paths
// reminder block; empty when there is nothing to report.
func ResolveReminder(r *Resolution) string {
	if len(r.Files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<system-reminder type=\"agents.resolve.paths\">\n")
	b.WriteString("These AGENTS.md files apply to the paths you are working on. Read them before continuing:\n")
	for _, f := range r.Files {
		fmt.Fprintf(&b, "- %s (%s)\n", f.Path, f.Reason)
	}
	if r.Remaining > 0 {
		fmt.Fprintf(&b, "%d more apply; resolve again to get them.\n", r.Remaining)
	}
	b.WriteString("</system-reminder>\n")
	return b.String()
}

// Diff lists what changed between a saved state and now.
type Diff struct {
	Cwd     [2]string `json:"cwd,omitempty"`
	Root    [2]string `json:"root,omitempty"`
	Markers [2]string `json:"markers,omitempty"`
	Changed []string  `json:"changed,omitempty"`
	Removed []string  `json:"removed,omitempty"`
	Added   []string  `json:"added,omitempty"`
}

// Empty reports whether nothing changed.
func (d *Diff) Empty() bool {
	return d.Cwd[0] == "" && d.Root[0] == "" && d.Markers[0] == "" && len(d.Changed)+len(d.Removed)+len(d.Added) == 0
}

// Resume compares the saved state with the session started again in cwd,
// returns the differences and the fresh state to save.
func (s *State) Resume(p Profile, cwd string, o Options) (*Diff, *State, error) {
	now, err := NewState(p, cwd, o)
	if err != nil {
		return nil, nil, err
	}
	fsys := o.FS
	if fsys == nil {
		fsys = OS
	}
	d := &Diff{}
	if s.Cwd != now.Cwd {
		d.Cwd = [2]string{s.Cwd, now.Cwd}
	}
	if s.Root != now.Root {
		d.Root = [2]string{s.Root, now.Root}
	}
	if a, b := strings.Join(s.Markers, ","), strings.Join(now.Markers, ","); a != b {
		d.Markers = [2]string{a, b}
	}
	known := make([]string, 0, len(s.Files))
	for f := range s.Files {
		known = append(known, f)
	}
	sort.Strings(known)
	for _, f := range known {
		fi, err := fsys.Stat(f)
		switch {
		case err != nil || !fi.Mode().IsRegular():
			d.Removed = append(d.Removed, f)
		case !fi.ModTime().Equal(s.Files[f]):
			d.Changed = append(d.Changed, f)
			now.Files[f] = fi.ModTime()
		default:
			now.Files[f] = fi.ModTime()
		}
	}
	for _, f := range now.Initial {
		if _, ok := s.Files[f]; !ok {
			d.Added = append(d.Added, f)
		}
	}
	return d, now, nil
}

// ResumeReminder renders a diff as the session.resume.diff reminder block;
// empty when nothing changed.
func ResumeReminder(d *Diff) string {
	if d.Empty() {
		return ""
	}
	var b strings.Builder
	b.WriteString("<system-reminder type=\"session.resume.diff\">\n")
	b.WriteString("Since this session was saved:\n")
	if d.Cwd[0] != "" {
		fmt.Fprintf(&b, "- the working directory changed: %s -> %s\n", d.Cwd[0], d.Cwd[1])
	}
	if d.Root[0] != "" {
		fmt.Fprintf(&b, "- the project root changed: %s -> %s\n", d.Root[0], d.Root[1])
	}
	if d.Markers[0] != "" {
		fmt.Fprintf(&b, "- the root markers changed: %s -> %s\n", d.Markers[0], d.Markers[1])
	}
	for _, f := range d.Changed {
		fmt.Fprintf(&b, "- %s changed\n", f)
	}
	for _, f := range d.Removed {
		fmt.Fprintf(&b, "- %s was removed\n", f)
	}
	for _, f := range d.Added {
		fmt.Fprintf(&b, "- %s now applies\n", f)
	}
	b.WriteString("Re-read the instruction files that changed or now apply; forget those removed.\n")
	b.WriteString("</system-reminder>\n")
	return b.String()
}
