// Package skill installs a persona's skills into a run's sandbox: it
// resolves each skill's source (persona.ParseSkillSource), fetches remote
// ones into the cache of the workforce home (Cache), and plans where the
// effective harness will find them (Plan): the directory of its measured
// skill directories (harness.SkillTable) at the sandbox's project root,
// or the nearest directory above the working directory that the harness
// reads, and which of the repository's own skills a persona skill of the
// same name replaces there.
//
// Where skills land. Each harness reads its skill directories from its
// working directory up to the repository's root (the nearest directory
// with a .git). So persona skills land in the harness's Write directory
// at that root when it is inside the project (the project root itself,
// usually), else, outside any repository, at the project root for a
// harness that walks up anyway (claude, opencode) and in the working
// directory for one that does not (codex). A symlinked skill directory in
// the project is followed when it stays inside the project; one leading
// out of it is an error.
//
// Name clashes. A repository skill named like a persona skill, in any
// directory the harness reads between its working directory and that
// root, is hidden from the sandbox (its files are left out of the copy,
// as hidden instruction files are), and the plan says it is replaced.
// The repository's other skills stay.
//
// What never happens: skills never sync back (mount.Sandbox.MaterializeDir
// records them, and what the agent adds beside them, as never crossing)
// and never touch the real tree; git in the sandbox does not see them.
//
// Where skill code lives. A skill as files (SKILL.md's front matter, a
// skill directory read whole within limits) is internal/skillmd, since
// persona checks local skills when it loads a persona and must not import
// this package, which imports mount and harness; the sources a persona
// file writes, and reading a persona's own skill, are persona's
// (persona.ParseSkillSource, persona.ReadSkill); fetching, the cache and
// the plan are here; npm and npx are run through internal/npm. Copying a
// planned skill into the sandbox is the sandbox's side: Plan.Dirs gives
// each skill as a mount.Dir, which session writes into the sandbox with
// mount.Sandbox.MaterializeDir, a primitive that knows nothing of skills.
package skill

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
	"github.com/seed-3bc194a6/workforce/internal/skillmd"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/persona"
)

// Cache states of a planned skill.
const (
	// StateLocal: read from the persona's own files.
	StateLocal = "local"
	// StateInline: carried in the persona file.
	StateInline = "inline"
	// StateCached: in the cache; the run uses it, offline too.
	StateCached = "cached"
	// StateMissing: not in the cache; the run fetches it.
	StateMissing = "not cached"
	// StateRefresh: the run fetches it again (--refresh-skills).
	StateRefresh = "refresh"
)

// Options say which skills a run installs, for which harness, where.
type Options struct {
	Skills []persona.Skill
	// Harness is the effective harness and Version its installed
	// version ("" when unknown: the newest measured family).
	Harness, Version string
	// Root is the real project root and Cwd the real working directory,
	// canonical, Cwd at or below Root; Tree is the sandbox's copy of Root.
	Root, Cwd, Tree string
	Cache           *Cache
	// Refresh fetches every remote skill again.
	Refresh bool
}

// Item is one skill of a plan.
type Item struct {
	ID     string            `json:"id"`
	Name   string            `json:"name"`
	Source string            `json:"source"`
	Kind   persona.SkillKind `json:"kind"`
	// Path is a local skill's file or directory.
	Path string `json:"path,omitempty"`
	// Cache is the cache state (StateLocal, ...); CacheDir the entry of
	// a remote skill; Version the version it was fetched at, when known.
	Cache    string `json:"cache"`
	CacheDir string `json:"cacheDir,omitempty"`
	Version  string `json:"version,omitempty"`
	// Dest is where the skill lands in the sandbox.
	Dest string `json:"dest"`
	// Replaces are the repository's skills of the same name that the
	// sandbox hides, relative to the project root.
	Replaces []string `json:"replaces,omitempty"`

	src     persona.SkillSource
	content *skillmd.Content
}

// Plan is where a run's skills come from and land.
type Plan struct {
	Harness string `json:"harness"`
	// Read are the directories the harness reads skills from (relative to
	// each directory it looks in) and Dir the one the skills land in, in
	// the sandbox.
	Read  []string `json:"read"`
	Dir   string   `json:"dir"`
	Items []*Item  `json:"items"`
	// Notes are what the user should read: an unmeasured harness version,
	// a repository skill directory that cannot be hidden.
	Notes []string `json:"notes,omitempty"`

	o    Options
	dirs harness.SkillDirs
	top  string // the real directory the harness's walk stops at
	dest string // the real Write directory, symlinks resolved
	rel  string // dest relative to Root, slash form
	hide []string
}

// NewPlan plans the skills of o: each skill's source and cache state, and
// for the harness where each lands and what of the repository it
// replaces. Local and inline skills are read and checked here; remote ones
// are looked up in the cache (Fetch gets them).
func NewPlan(o Options) (*Plan, error) {
	dirs, note, err := harness.SkillDirsFor(o.Harness, o.Version)
	if err != nil {
		return nil, err
	}
	p := &Plan{Harness: o.Harness, Read: dirs.Read, o: o, dirs: dirs}
	if note != "" {
		p.Notes = append(p.Notes, note)
	}
	for _, sk := range o.Skills {
		it := &Item{ID: sk.ID, Source: sk.Source}
		if len(sk.Files) > 0 {
			it.Kind, it.Cache = persona.SkillInline, StateInline
		} else {
			src, err := persona.ParseSkillSource(sk.Source)
			if err != nil {
				return nil, skillErr(sk, err)
			}
			it.src, it.Kind = src, src.Kind
		}
		switch it.Kind {
		case persona.SkillInline, persona.SkillLocal:
			c, err := persona.ReadSkill(sk)
			if err != nil {
				return nil, skillErr(sk, err)
			}
			it.content, it.Name, it.Path = c, c.Name, sk.Path
			if it.Kind == persona.SkillLocal {
				it.Cache = StateLocal
			}
		default:
			it.Name = it.src.Name
			meta, dir, ok := o.Cache.Lookup(sk.Source, it.src)
			it.CacheDir = dir
			switch {
			case o.Refresh:
				it.Cache = StateRefresh
			case ok:
				it.Cache, it.Version = StateCached, meta.Version
			default:
				it.Cache = StateMissing
			}
			if ok {
				it.Name = meta.Name
			}
			if it.Name == "" {
				it.Name = fallbackName(sk)
			}
		}
		p.Items = append(p.Items, it)
	}
	if err := p.place(); err != nil {
		return nil, err
	}
	return p, nil
}

// skillErr names the skill, its source and its persona file in err.
func skillErr(sk persona.Skill, err error) error {
	where := ""
	if sk.File != "" {
		where = ", declared in " + sk.File
	}
	return fmt.Errorf("skill %s (source %q%s): %w", sk.ID, sk.Source, where, err)
}

// fallbackName is the name a remote skill whose source does not tell it
// is planned under until it is fetched: the last part of its id.
func fallbackName(sk persona.Skill) string {
	id := sk.ID[strings.LastIndexAny(sk.ID, "/:@")+1:]
	if skillmd.ValidateName(id) == nil {
		return id
	}
	return "skill"
}

// place decides where the skills land and what they replace.
func (p *Plan) place() error {
	o := p.o
	seen := map[string]string{}
	for _, it := range p.Items {
		if other, dup := seen[it.Name]; dup {
			return fmt.Errorf("skills %s and %s both install as %q; a harness sees one skill of a name", other, it.ID, it.Name)
		}
		seen[it.Name] = it.ID
	}
	// The directory the harness's walk stops at: the nearest with a .git
	// at or above the working directory, inside the project.
	p.top = ""
	for d := o.Cwd; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			p.top = d
			break
		}
		if d == o.Root || d == filepath.Dir(d) {
			break
		}
	}
	if p.top == "" {
		p.top = o.Cwd
		if p.dirs.WalkWithoutGit {
			p.top = o.Root
		}
	}
	if p.dirs.WorkdirOnly {
		p.top = o.Cwd
	}
	dest, err := resolveIn(o.Root, filepath.Join(p.top, filepath.FromSlash(p.dirs.Write)))
	if err != nil {
		return fmt.Errorf("cannot install skills for %s: %w", p.Harness, err)
	}
	p.dest = dest
	rel, _ := filepath.Rel(o.Root, dest)
	p.rel = filepath.ToSlash(rel)
	p.Dir = filepath.Join(o.Tree, rel)
	p.hide = nil
	names := map[string]*Item{}
	for _, it := range p.Items {
		it.Dest = filepath.Join(p.Dir, it.Name)
		it.Replaces = nil
		names[it.Name] = it
	}
	// Repository skills of the same names, wherever the harness would
	// find them: in each of its directories, from the working directory
	// up to where its walk stops.
	seenDir := map[string]bool{}
	for d := o.Cwd; ; d = filepath.Dir(d) {
		for _, r := range p.dirs.Read {
			real, err := filepath.EvalSymlinks(filepath.Join(d, filepath.FromSlash(r)))
			if err != nil {
				continue // none there
			}
			rrel, in := relIn(o.Root, real)
			if !in {
				p.Notes = append(p.Notes, fmt.Sprintf("%s leads out of the project (to %s): its skills cannot be hidden from the sandbox", filepath.Join(d, r), real))
				continue
			}
			if seenDir[rrel] {
				continue
			}
			seenDir[rrel] = true
			entries, err := os.ReadDir(real)
			if err != nil {
				continue
			}
			for _, e := range entries {
				it := names[e.Name()]
				if it == nil {
					continue
				}
				shown, _ := filepath.Rel(o.Root, filepath.Join(d, filepath.FromSlash(r), e.Name()))
				it.Replaces = append(it.Replaces, filepath.ToSlash(shown))
				files, err := filesBelow(o.Root, filepath.Join(real, e.Name()))
				if err != nil {
					return err
				}
				p.hide = append(p.hide, files...)
			}
		}
		if d == p.top || d == o.Root || d == filepath.Dir(d) {
			break
		}
	}
	sort.Strings(p.hide)
	return nil
}

// resolveIn resolves the symlinks of path, which need not exist yet (its
// longest existing prefix is resolved), and checks that it stays inside
// root.
func resolveIn(root, p string) (string, error) {
	rest := []string{}
	cur := p
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				real = filepath.Join(real, rest[i])
			}
			if _, in := relIn(root, real); !in {
				return "", fmt.Errorf("%s leads out of the project, to %s", p, real)
			}
			return real, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", fmt.Errorf("%s: no part of it exists", p)
		}
		rest = append(rest, filepath.Base(cur))
		cur = parent
	}
}

// relIn returns p relative to root, when it is inside it.
func relIn(root, p string) (string, bool) {
	if !pathutil.Within(root, p) {
		return "", false
	}
	rel, err := filepath.Rel(root, p)
	return filepath.ToSlash(rel), err == nil
}

// filesBelow lists what the copy would bring of p (relative to root, slash
// form): p itself when it is not a directory, else every entry below it
// that is not a directory.
func filesBelow(root, p string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, q)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out, err
}

// Hide returns the repository's files the sandbox leaves out (relative to
// the project root, slash form): those of the skills the persona's
// replace.
func (p *Plan) Hide() []string { return p.hide }

// Fetch gets every skill's content: remote ones from the cache, fetched
// first when it does not hold them (or Refresh), in the order of the
// persona. progress, when set, is called before each fetch. When a fetched
// skill's name is not the one planned, the plan is placed again (Dest,
// Replaces, Hide).
func (p *Plan) Fetch(ctx context.Context, progress func(it *Item)) error {
	moved := false
	for _, it := range p.Items {
		if it.content != nil {
			continue
		}
		if progress != nil && it.Cache != StateCached {
			progress(it)
		}
		c, meta, fetched, err := p.o.Cache.Get(ctx, it.Source, it.src, p.o.Refresh)
		if err != nil {
			return fmt.Errorf("skill %s: %w", it.ID, err)
		}
		it.content, it.Version = c, meta.Version
		if fetched {
			it.Cache = StateCached
		}
		if c.Name != it.Name {
			it.Name, moved = c.Name, true
		}
	}
	if moved {
		return p.place()
	}
	return nil
}

// Dirs returns the skills as directories to materialize in the sandbox
// (relative to the sandbox's tree, slash form). Fetch must have run.
func (p *Plan) Dirs() []mount.Dir {
	var out []mount.Dir
	for _, it := range p.Items {
		if it.content == nil {
			continue
		}
		d := mount.Dir{Rel: path.Join(p.rel, it.Name)}
		for _, f := range it.content.Files {
			d.Files = append(d.Files, mount.DirFile{Path: f.Path, Data: f.Data, Exec: f.Exec})
		}
		out = append(out, d)
	}
	return out
}

// Names returns the skills' names, in the persona's order.
func (p *Plan) Names() []string {
	var out []string
	for _, it := range p.Items {
		out = append(out, it.Name)
	}
	return out
}
