// Package install installs persona packs into a layer directory.
//
// Each persona of the pack lands as <target>/<id>.json, and the sidecar
// files it references are copied to <target>/<id>__assets/, with the JSON's
// paths rewritten to point there. The JSON is re-encoded from the parsed
// persona (two-space indentation, fields in schema order); a relative
// "$schema" is dropped since it would no longer resolve. A file referenced
// twice is copied once. Sidecars keep their base name; when two different
// files of one persona share a base name, the first in reference order (top
// level claudeMd, agentsMd, then tiers best, best-value, minimum) keeps it
// and each later one is named <stem>--<tier>-<channel>.md, or
// <stem>--<channel>.md at the top level. A local skill is copied to
// <target>/<id>__assets/skills/<name>/ (a .md file as <name>/SKILL.md) and
// its source points there; inline and remote skills stay as written.
//
// A persona installed over a persona of the same id in a lower layer is an
// override, as every persona file is: it inherits what it does not set,
// unless it says "inherit": false. Given the cascade (Options.Layers), Pack
// reports which persona each one overrides and the fields it inherits, or
// which it shadows, so that the command can say so.
//
// An error about a file of a source Open copied into a temporary directory
// (an unpacked archive, a clone) names the file as the source has it, after
// the source ("x.tgz: package/personas/a.json:3:5: ..."; SourceError).
//
// An install lands whole or not at all: everything is written to a staging
// directory beside the target, then renamed into place; if a rename fails,
// the ones already done are undone and replaced files restored. Concurrent
// installs into one target are serialized with a lock file beside it.
package install

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/rogpeppe/go-internal/lockedfile"
	"github.com/seed-3bc194a6/workforce/internal/npm"
	"github.com/seed-3bc194a6/workforce/pack"
	"github.com/seed-3bc194a6/workforce/persona"
)

// Options say what to install where.
type Options struct {
	// Target is the layer directory; it is created when missing.
	Target string
	// Personas selects personas by id or by doublestar pattern of ids
	// ("review-*"); empty means all. An unknown id is an
	// *UnknownPersonaError, a pattern matching no persona a
	// *persona.NoMatchError; either fails before anything is written.
	Personas []string
	// Overwrite replaces installed personas of the same id.
	Overwrite bool
	// Source, when set, is recorded in the target's lock file (LockFile)
	// with what the personas' files hash to; Resolved is what it resolved
	// to (a git commit, an npm name@version).
	Source, Resolved string
	// Frozen installs only when the lock file's entry of Source holds the
	// same resolution, personas and file hashes (and then replaces them).
	Frozen bool
	// Layers, when set, is the cascade the target is read in, highest
	// first: Pack then reports, for each persona it installed, the
	// persona of the same id below the target it overrides or shadows
	// (Installed.Overrides, Inherits, Shadows), and the name of the
	// target's layer (Result.Layer). A target that is none of the layers'
	// directories is outside the cascade, above none of them: nothing is
	// reported.
	Layers []persona.Layer
}

// Installed is one installed persona.
type Installed struct {
	ID     string   `json:"id"`
	File   string   `json:"file"`
	Assets []string `json:"assets"`
	// Overrides is the persona of the same id below the target that the
	// installed one is laid over, and Inherits the fields it takes from
	// there (persona.Persona.Inherited); Shadows is the one it hides,
	// taking nothing ("inherit": false). Set only with Options.Layers.
	Overrides *persona.Origin `json:"overrides,omitempty"`
	Inherits  []string        `json:"inherits,omitempty"`
	Shadows   *persona.Origin `json:"shadows,omitempty"`
}

// Result is what Pack did.
type Result struct {
	Target string `json:"target"`
	// Layer is the name of the layer of Options.Layers that Target is;
	// empty when it is none of them, or none were given.
	Layer     string      `json:"layer,omitempty"`
	Installed []Installed `json:"installed"`
}

// ConflictError lists personas already installed.
type ConflictError struct {
	Target string
	IDs    []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%d persona(s) already installed in %s: %s", len(e.IDs), e.Target, strings.Join(e.IDs, ", "))
}

// UnknownPersonaError reports --persona ids the pack does not have.
type UnknownPersonaError struct {
	IDs, Known []string
}

func (e *UnknownPersonaError) Error() string {
	return fmt.Sprintf("the pack has no persona %s; it has %s", strings.Join(e.IDs, ", "), strings.Join(e.Known, ", "))
}

// failHook, when set by tests, is called before each rename into the
// target; an error aborts the install there.
var failHook func(step int) error

// staged is one persona ready to move into place.
type staged struct {
	id     string
	names  []string // <id>.json and <id>__assets, as present in staging
	assets []string
}

// Pack installs p into o.Target.
func Pack(p *pack.Pack, o Options) (*Result, error) {
	chosen := p.Personas
	if len(o.Personas) > 0 {
		have := map[string]pack.Persona{}
		for _, ps := range p.Personas {
			have[ps.ID] = ps
		}
		var unknown []string
		chosen = nil
		add := func(ps pack.Persona) {
			if !slices.ContainsFunc(chosen, func(c pack.Persona) bool { return c.ID == ps.ID }) {
				chosen = append(chosen, ps)
			}
		}
		for _, id := range o.Personas {
			if persona.IsPattern(id) {
				if err := persona.CheckPattern(id); err != nil {
					return nil, err
				}
				found := false
				for _, ps := range p.Personas {
					if persona.MatchPattern(id, ps.ID) {
						add(ps)
						found = true
					}
				}
				if !found {
					return nil, &persona.NoMatchError{What: "persona", Pattern: id, Known: p.IDs()}
				}
				continue
			}
			ps, ok := have[id]
			if !ok {
				unknown = append(unknown, id)
				continue
			}
			add(ps)
		}
		if len(unknown) > 0 {
			return nil, &UnknownPersonaError{IDs: unknown, Known: p.IDs()}
		}
	}
	target, err := filepath.Abs(o.Target)
	if err != nil {
		return nil, err
	}
	parent := filepath.Dir(target)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", parent, err)
	}
	unlock, err := lockedfile.MutexAt(filepath.Join(parent, "."+filepath.Base(target)+".lock")).Lock()
	if err != nil {
		return nil, fmt.Errorf("cannot lock %s: %w", target, err)
	}
	defer unlock()

	lock, err := ReadLock(target)
	if err != nil {
		return nil, err
	}
	if o.Frozen && lock.Entry(o.Source) == nil {
		return nil, &FrozenError{o.Source, "the lock file has no entry for it"}
	}
	var conflicts []string
	for _, ps := range chosen {
		if _, err := os.Lstat(filepath.Join(target, ps.ID+".json")); err == nil {
			// --frozen replaces what the lock says this source
			// installed, and nothing else.
			if e := lock.Entry(o.Source); !o.Frozen || e == nil || !slices.Contains(e.Personas, ps.ID) {
				conflicts = append(conflicts, ps.ID)
			}
		}
	}
	if len(conflicts) > 0 && !o.Overwrite {
		return nil, &ConflictError{Target: target, IDs: conflicts}
	}
	if err := checkCycles(target, p.Dir, chosen); err != nil {
		return nil, inSource(err, p.TempDir, p.SourceName)
	}

	stage, err := os.MkdirTemp(parent, "."+filepath.Base(target)+".staging-")
	if err != nil {
		return nil, fmt.Errorf("cannot write beside %s: %w", target, err)
	}
	defer os.RemoveAll(stage)
	all, err := stageAll(stage, chosen)
	if err != nil {
		return nil, inSource(err, p.TempDir, p.SourceName)
	}
	var entry LockEntry
	if o.Source != "" {
		entry = LockEntry{Source: o.Source, Resolved: o.Resolved, Personas: []string{}}
		var names []string
		for _, st := range all {
			entry.Personas = append(entry.Personas, st.id)
			names = append(names, st.names...)
		}
		if entry.Files, err = hashTree(stage, names); err != nil {
			return nil, err
		}
		if o.Frozen {
			if err := checkFrozen(lock, o.Source, o.Resolved, entry.Personas, entry.Files); err != nil {
				return nil, err
			}
		}
	}
	if err := os.MkdirAll(target, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", target, err)
	}
	if err := commit(stage, target, all); err != nil {
		return nil, err
	}
	if o.Source != "" || len(lock.Packs) > 0 {
		if o.Source != "" {
			lock.record(entry)
		} else {
			// Not from a source the lock follows (an import): the
			// personas it replaced are no longer the lock's.
			var ids []string
			for _, st := range all {
				ids = append(ids, st.id)
			}
			lock.forget(ids, "")
		}
		if err := lock.write(target); err != nil {
			return nil, fmt.Errorf("installed, but the lock file %s was not written: %w", filepath.Join(target, LockFile), err)
		}
	}
	res := &Result{Target: target, Installed: []Installed{}}
	for _, st := range all {
		res.Installed = append(res.Installed, Installed{ID: st.id, File: filepath.Join(target, st.id+".json"), Assets: st.assets})
	}
	if len(o.Layers) > 0 {
		relate(res, o.Layers)
	}
	return res, nil
}

// relate fills in what each installed persona overrides or shadows: it
// loads the target's layer and the layers below it, and reads the
// relation off each persona whose top file is the installed one. A target
// that is none of the layers is above none of them: it overrides and
// shadows nothing.
func relate(res *Result, layers []persona.Layer) {
	same := func(a, b string) bool {
		if a == b {
			return true
		}
		ra, errA := filepath.EvalSymlinks(a)
		rb, errB := filepath.EvalSymlinks(b)
		return errA == nil && errB == nil && ra == rb
	}
	var here persona.Layer
	var below []persona.Layer
	for i, l := range layers {
		if l.Dir != "" && same(filepath.Clean(l.Dir), res.Target) {
			here, below = persona.Layer{Name: l.Name, Dir: res.Target}, layers[i+1:]
			break
		}
	}
	if here.Name == "" {
		return
	}
	res.Layer = here.Name
	cat := persona.LoadLayers(append([]persona.Layer{here}, below...))
	for i := range res.Installed {
		in := &res.Installed[i]
		p, ok := cat.Get(in.ID)
		if !ok || p.Path != in.File {
			continue
		}
		in.Overrides, in.Shadows = p.Overrides, p.Shadows
		if p.Overrides != nil {
			in.Inherits = p.Inherited()
		}
	}
}

// checkCycles refuses personas that would form an extends cycle in the
// target layer, with each other or with the personas already there: the
// loader would fail every member, and the install would leave personas no
// command can use. The cycle is named as the loader names it, from its
// first installed persona in id order. A cycle can only run within one layer, since
// extends looks at the layer of the file and those below.
func checkCycles(target, packDir string, chosen []pack.Persona) error {
	extends := map[string]string{} // id -> the other id it extends
	files := map[string]string{}
	entries, _ := os.ReadDir(target)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") || !e.Type().IsRegular() {
			continue
		}
		file := filepath.Join(target, e.Name())
		data, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		if spec, err := persona.Parse(file, data); err == nil && spec.Extends != "" && spec.Extends != spec.ID {
			extends[spec.ID], files[spec.ID] = spec.Extends, file
		}
	}
	ids := make([]string, 0, len(chosen))
	for _, ps := range chosen {
		ids = append(ids, ps.ID)
		delete(extends, ps.ID)
		if x := ps.Spec.Extends; x != "" && x != ps.ID {
			extends[ps.ID], files[ps.ID] = x, filepath.Join(packDir, filepath.FromSlash(ps.File))
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		path, at := []string{id}, map[string]int{id: 0}
		for cur := id; ; {
			next, ok := extends[cur]
			if !ok {
				break
			}
			if i, seen := at[next]; seen {
				cycle := append(slices.Clone(path[i:]), next)
				if i > 0 {
					break // a cycle id does not belong to: found from one of its own
				}
				return fmt.Errorf("%s: extends: extends cycle: %s; no persona of the cycle could load, so nothing is installed",
					files[id], strings.Join(cycle, " -> "))
			}
			at[next] = len(path)
			path = append(path, next)
			cur = next
		}
	}
	return nil
}

// stageAll stages each persona of chosen in stage.
func stageAll(stage string, chosen []pack.Persona) ([]staged, error) {
	var all []staged
	for _, ps := range chosen {
		st, err := stagePersona(stage, ps)
		if err != nil {
			return nil, err
		}
		all = append(all, st)
	}
	return all, nil
}

// Hashes returns what installing p would write, as a lock entry's files
// hold it: the hash of each file by its path in the layer.
func Hashes(p *pack.Pack) (map[string]string, error) {
	stage, err := os.MkdirTemp("", "workforce-hash-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	all, err := stageAll(stage, p.Personas)
	if err != nil {
		return nil, inSource(err, p.TempDir, p.SourceName)
	}
	var names []string
	for _, st := range all {
		names = append(names, st.names...)
	}
	return hashTree(stage, names)
}

// stagePersona writes a persona and its assets into the staging directory.
func stagePersona(stage string, ps pack.Persona) (staged, error) {
	st := staged{id: ps.ID, names: []string{ps.ID + ".json"}, assets: []string{}}
	spec := *ps.Spec
	spec.Tiers = map[string]*persona.Runtime{}
	for k, v := range ps.Spec.Tiers {
		rt := *v
		spec.Tiers[k] = &rt
	}
	if len(spec.Tiers) == 0 {
		spec.Tiers = nil
	}
	if spec.Schema != "" && !strings.Contains(spec.Schema, "://") {
		spec.Schema = ""
	}
	assetDir := ps.ID + "__assets"
	names := map[string]string{} // source path -> asset name
	used := map[string]string{}  // asset name -> source path
	for _, ref := range spec.SidecarRefs() {
		name, ok := names[ref.Path]
		if !ok {
			name = filepath.Base(ref.Path)
			if other, taken := used[name]; taken && other != ref.Path {
				stem := strings.TrimSuffix(name, filepath.Ext(name))
				if ref.Tier == "" {
					name = fmt.Sprintf("%s--%s%s", stem, ref.Channel, filepath.Ext(name))
				} else {
					name = fmt.Sprintf("%s--%s-%s%s", stem, ref.Tier, ref.Channel, filepath.Ext(name))
				}
			}
			names[ref.Path], used[name] = name, ref.Path
			data, err := os.ReadFile(ref.Path)
			if err != nil {
				return st, fmt.Errorf("%s: %s: %w", ps.File, ref.Field(), err)
			}
			if err := os.MkdirAll(filepath.Join(stage, assetDir), 0o755); err != nil {
				return st, err
			}
			if err := os.WriteFile(filepath.Join(stage, assetDir, name), data, 0o644); err != nil {
				return st, err
			}
			st.assets = append(st.assets, name)
		}
		spec.SetSidecarPath(ref, assetDir+"/"+name)
	}
	if err := stageSkills(stage, ps, &spec, &st); err != nil {
		return st, err
	}
	if len(st.assets) > 0 {
		st.names = append(st.names, assetDir)
	}
	sort.Strings(st.assets)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&spec); err != nil {
		return st, err
	}
	if err := os.WriteFile(filepath.Join(stage, ps.ID+".json"), buf.Bytes(), 0o644); err != nil {
		return st, err
	}
	return st, nil
}

// stageSkills copies the persona's local skills into
// <id>__assets/skills/<name>/ (a .md file becomes <name>/SKILL.md) and
// points their sources there. Inline and remote skills stay as written.
func stageSkills(stage string, ps pack.Persona, spec *persona.Spec, st *staged) error {
	if len(spec.Skills) == 0 {
		return nil
	}
	skills := make([]persona.Skill, len(spec.Skills))
	copy(skills, spec.Skills)
	spec.Skills = skills
	seen := map[string]string{}
	for i := range skills {
		sk := &skills[i]
		if len(sk.Files) > 0 || sk.Path == "" {
			continue
		}
		c, err := persona.ReadSkill(*sk)
		if err != nil {
			return fmt.Errorf("%s: skills.%d.source: %w", ps.File, i, err)
		}
		if other, dup := seen[c.Name]; dup {
			return fmt.Errorf("%s: skills %s and %s both install as %q", ps.File, other, sk.ID, c.Name)
		}
		seen[c.Name] = sk.ID
		rel := ps.ID + "__assets/skills/" + c.Name
		for _, f := range c.Files {
			dst := filepath.Join(stage, filepath.FromSlash(rel), filepath.FromSlash(f.Path))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			mode := os.FileMode(0o644)
			if f.Exec {
				mode = 0o755
			}
			if err := os.WriteFile(dst, f.Data, mode); err != nil {
				return err
			}
		}
		st.assets = append(st.assets, "skills/"+c.Name)
		sk.Source, sk.Path, sk.Within = rel, "", ""
	}
	return nil
}

// commit moves the staged personas into target. Replaced files go to the
// staging directory first, so that a failure can put everything back.
func commit(stage, target string, all []staged) (err error) {
	old := filepath.Join(stage, ".replaced")
	if err := os.Mkdir(old, 0o755); err != nil {
		return err
	}
	type move struct{ from, to string }
	var done []move
	defer func() {
		if err == nil {
			return
		}
		for i := len(done) - 1; i >= 0; i-- {
			if rerr := os.Rename(done[i].to, done[i].from); rerr != nil {
				err = fmt.Errorf("%w; and restoring %s failed: %v", err, done[i].from, rerr)
			}
		}
	}()
	do := func(from, to string) error {
		if err := os.Rename(from, to); err != nil {
			return err
		}
		done = append(done, move{from, to})
		return nil
	}
	step := 0
	for _, st := range all {
		// Remove what a previous install of this id left, the assets
		// directory included even when the new version has none.
		for _, name := range []string{st.id + ".json", st.id + "__assets"} {
			if _, err := os.Lstat(filepath.Join(target, name)); err == nil {
				if err := do(filepath.Join(target, name), filepath.Join(old, name)); err != nil {
					return fmt.Errorf("cannot replace %s: %w", filepath.Join(target, name), err)
				}
			}
		}
		for _, name := range st.names {
			if failHook != nil {
				if err := failHook(step); err != nil {
					return err
				}
			}
			step++
			if err := do(filepath.Join(stage, name), filepath.Join(target, name)); err != nil {
				return fmt.Errorf("cannot install %s: %w", filepath.Join(target, name), err)
			}
		}
	}
	return nil
}

// ErrNoNpm is returned when an npm spec is given and npm is not installed.
var ErrNoNpm = fmt.Errorf("%w; it is needed to fetch packs from the npm registry", npm.ErrNotInstalled)
