// Package pack reads persona packs and writes them as npm-style tarballs.
//
// A pack is a directory with a package.json whose agentworkforce.personas
// names the persona directory (default "personas"). Collect finds every
// persona JSON below it (recursively, skipping hidden directories and
// node_modules), every sidecar each references, at the top level and per
// tier, and the files of its local skills (a .md file, or every file of a
// skill directory), and validates all of it with the loader's code: a
// missing sidecar or skill, an invalid SKILL.md, an unsafe path, a symlink
// leaving the pack directory, two personas with one id or two persona
// files with one name are errors.
//
// Write produces a reproducible gzip'd tar that npm publish accepts: entries
// under "package/", sorted, with a fixed modification time (the one npm
// uses, 1985-10-26 08:15 UTC), owner 0, no user or group names, mode 0644
// (0755 for an executable file, a skill's script), no directory entries, and a gzip header without name or time. It holds
// package.json, README* and LICENSE* files at the root when present, the
// persona JSON files as they are, and the sidecars they reference; other
// markdown is left out.
//
// ReadArchive unpacks such a tarball into a directory, refusing absolute
// paths, "..", links, devices, entries outside "package/", and archives over
// MaxBytes or MaxEntries.
package pack

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
	"github.com/seed-3bc194a6/workforce/persona"
)

// ModTime is the modification time of every entry, as in npm's tarballs.
var ModTime = time.Date(1985, 10, 26, 8, 15, 0, 0, time.UTC)

// Persona is one persona of a pack.
type Persona struct {
	ID string
	// File is the persona JSON, relative to the pack root (slash form).
	File string
	// Spec is the parsed persona; its sidecar paths are absolute.
	Spec *persona.Spec
	// Data is the JSON file as written.
	Data []byte
}

// Pack is a collected pack.
type Pack struct {
	Dir         string
	Name        string
	Version     string
	Description string
	PersonaDir  string
	Personas    []Persona
	// Files maps archive paths (relative to the pack root, slash form) to
	// absolute source paths, for everything Write puts in the archive.
	Files map[string]string
	// Generated maps archive paths to the content of files made for the
	// archive (a plugin layout), written beside Files; Plugin names the
	// plugin.
	Generated map[string]Content
	Plugin    string
	// Resolved is what the source the pack was read from resolved to (a
	// git commit, an npm name@version), set by install.Open.
	Resolved string
	// TempDir is the temporary directory install.Open copied the source
	// into (an unpacked archive, a clone), and SourceName the source as
	// the user named it; errors about the files there name them by
	// SourceName and their path in the source. Both empty for a
	// directory read in place.
	TempDir, SourceName string
}

// Content is a file made for the archive.
type Content struct {
	Data []byte
	Exec bool
}

// IDs returns the persona ids, sorted.
func (p *Pack) IDs() []string {
	ids := make([]string, len(p.Personas))
	for i, ps := range p.Personas {
		ids[i] = ps.ID
	}
	sort.Strings(ids)
	return ids
}

type packageJSON struct {
	Name           string `json:"name"`
	Version        string `json:"version"`
	Description    string `json:"description"`
	AgentWorkforce struct {
		Personas string `json:"personas"`
	} `json:"agentworkforce"`
}

// Options select the persona files of a pack.
type Options struct {
	// Include, when not empty, keeps only the persona files whose path
	// relative to the persona directory (slash form, "review/lint.json")
	// matches one of these doublestar patterns; Exclude then drops those
	// matching one of its patterns. A pattern that matches no persona file
	// is an error. Files left out are not read.
	Include, Exclude []string
}

// Collect reads the pack in dir.
func Collect(dir string) (*Pack, error) { return CollectWith(dir, Options{}) }

// CollectWith reads the pack in dir, keeping the persona files o selects.
func CollectWith(dir string, o Options) (*Pack, error) {
	for _, pat := range append(append([]string{}, o.Include...), o.Exclude...) {
		if err := persona.CheckPattern(pat); err != nil {
			return nil, err
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("cannot read pack %s: %w", dir, err)
	}
	pjPath := filepath.Join(root, "package.json")
	data, err := os.ReadFile(pjPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no package.json; a pack is a directory with a package.json naming its persona directory", dir)
	}
	if err != nil {
		return nil, err
	}
	var pj packageJSON
	if err := json.Unmarshal(data, &pj); err != nil {
		// At the line and column, naming the field as the file does
		// ("version: must be a string, not number"), not Go's types.
		return nil, diag.JSONError(pjPath, data, err)
	}
	p := &Pack{Dir: root, Name: pj.Name, Version: pj.Version, Description: pj.Description, PersonaDir: pj.AgentWorkforce.Personas, Files: map[string]string{"package.json": pjPath}}
	if p.PersonaDir == "" {
		p.PersonaDir = "personas"
	}
	if err := validateDir(p.PersonaDir); err != nil {
		return nil, fmt.Errorf("%s: agentworkforce.personas: %v", pjPath, err)
	}
	pdir := filepath.Join(root, filepath.FromSlash(p.PersonaDir))
	if real, err := filepath.EvalSymlinks(pdir); err != nil {
		return nil, fmt.Errorf("%s: persona directory %s: %w", pjPath, p.PersonaDir, err)
	} else if !pathutil.Within(root, real) {
		return nil, fmt.Errorf("%s: persona directory %s leaves the pack through a symlink", pjPath, p.PersonaDir)
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		n := strings.ToUpper(e.Name())
		if e.Type().IsRegular() && (strings.HasPrefix(n, "README") || strings.HasPrefix(n, "LICENSE") || strings.HasPrefix(n, "LICENCE")) {
			p.Files[e.Name()] = filepath.Join(root, e.Name())
		}
	}
	var errs []error
	byID := map[string]string{}
	byBase := map[string]string{}
	var candidates []string // persona files, relative to the persona directory
	matched := map[string]bool{}
	keep := func(rel string) bool {
		candidates = append(candidates, rel)
		in := len(o.Include) == 0
		for _, pat := range o.Include {
			if persona.MatchPattern(pat, rel) {
				in, matched["+"+pat] = true, true
			}
		}
		out := false
		for _, pat := range o.Exclude {
			if persona.MatchPattern(pat, rel) {
				out, matched["-"+pat] = true, true
			}
		}
		return in && !out
	}
	err = filepath.WalkDir(pdir, func(file string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if file != pdir && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".json") {
			return nil
		}
		if inDir, _ := filepath.Rel(pdir, file); !keep(filepath.ToSlash(inDir)) {
			return nil
		}
		rel, _ := filepath.Rel(root, file)
		rel = filepath.ToSlash(rel)
		if d.Type()&fs.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(file)
			if err != nil || !pathutil.Within(root, real) {
				errs = append(errs, fmt.Errorf("%s: a symlink leaving the pack directory", file))
				return nil
			}
		}
		ps, err := collectPersona(file)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		ps.File = rel
		if other, dup := byID[ps.ID]; dup {
			errs = append(errs, fmt.Errorf("%s: persona id %q is also defined by %s", file, ps.ID, other))
			return nil
		}
		if other, dup := byBase[d.Name()]; dup {
			errs = append(errs, fmt.Errorf("%s: file name %s is also used by %s; persona files of a pack need distinct names", file, d.Name(), other))
			return nil
		}
		byID[ps.ID], byBase[d.Name()] = rel, rel
		p.Personas = append(p.Personas, *ps)
		p.Files[rel] = file
		for _, ref := range ps.Spec.SidecarRefs() {
			srel, err := filepath.Rel(root, ref.Path)
			if err != nil || strings.HasPrefix(srel, "..") {
				errs = append(errs, fmt.Errorf("%s: %s: sidecar %s is outside the pack", file, ref.Field(), ref.Path))
				continue
			}
			p.Files[filepath.ToSlash(srel)] = ref.Path
		}
		if err := collectSkills(p, root, file, ps.Spec); err != nil {
			errs = append(errs, err)
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	for _, sel := range []struct {
		flag     string
		patterns []string
	}{{"+", o.Include}, {"-", o.Exclude}} {
		for _, pat := range sel.patterns {
			if !matched[sel.flag+pat] {
				known := slices.Clone(candidates)
				sort.Strings(known)
				return nil, &persona.NoMatchError{What: "persona file", Pattern: pat, Known: known}
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(p.Personas) == 0 {
		return nil, fmt.Errorf("%s: no persona files in %s", dir, p.PersonaDir)
	}
	sort.Slice(p.Personas, func(i, j int) bool { return p.Personas[i].ID < p.Personas[j].ID })
	return p, nil
}

func collectPersona(file string) (*Persona, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	spec, err := persona.Parse(file, data)
	if err != nil {
		return nil, err
	}
	// A pack carries every sidecar its personas name: a missing one is
	// an error, not a field the loader would clear.
	if err := persona.AnchorStrict(spec, file); err != nil {
		return nil, err
	}
	warns, err := persona.AnchorSkills(spec, file)
	if err != nil {
		return nil, err
	}
	if len(warns) > 0 {
		es := make([]error, len(warns))
		for i, w := range warns {
			es[i] = w
		}
		return nil, errors.Join(es...)
	}
	return &Persona{ID: spec.ID, Spec: spec, Data: data}, nil
}

// collectSkills adds the files of the local skills of spec, read from
// file, to the pack: a .md file, or every file of a skill directory.
// Remote and inline skills travel in the JSON.
func collectSkills(p *Pack, root, file string, spec *persona.Spec) error {
	var errs []error
	for i, sk := range spec.Skills {
		if len(sk.Files) > 0 || sk.Path == "" {
			continue
		}
		c, err := persona.ReadSkill(sk)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: skills.%d.source: %w", file, i, err))
			continue
		}
		src, _ := persona.ParseSkillSource(sk.Source)
		srel, err := filepath.Rel(root, sk.Path)
		if err != nil || srel == ".." || strings.HasPrefix(srel, ".."+string(filepath.Separator)) {
			errs = append(errs, fmt.Errorf("%s: skills.%d.source: skill %s is outside the pack", file, i, sk.Path))
			continue
		}
		if src.File {
			p.Files[filepath.ToSlash(srel)] = sk.Path
			continue
		}
		for _, f := range c.Files {
			p.Files[path.Join(filepath.ToSlash(srel), f.Path)] = filepath.Join(sk.Path, filepath.FromSlash(f.Path))
		}
	}
	return errors.Join(errs...)
}

// FileName is the default name of the pack's tarball, as npm pack names it.
func (p *Pack) FileName() string {
	name := strings.ReplaceAll(strings.TrimPrefix(p.Name, "@"), "/", "-")
	if name == "" {
		name = "pack"
	}
	if p.Version == "" {
		return name + ".tgz"
	}
	return name + "-" + p.Version + ".tgz"
}

// Write writes the pack as a reproducible npm-style tarball.
func (p *Pack) Write(w io.Writer) error {
	if p.Name == "" || p.Version == "" {
		return fmt.Errorf("%s: package.json needs a name and a version to be packed", filepath.Join(p.Dir, "package.json"))
	}
	names := make([]string, 0, len(p.Files)+len(p.Generated))
	for n := range p.Files {
		names = append(names, n)
	}
	for n := range p.Generated {
		if c := path.Clean(n); c != n || path.IsAbs(n) || c == ".." || strings.HasPrefix(c, "../") {
			return fmt.Errorf("generated file %q would leave the pack", n)
		}
		if _, ok := p.Files[n]; ok {
			return fmt.Errorf("%s is in the pack directory and would be generated too", n)
		}
		names = append(names, n)
	}
	sort.Strings(names)
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, n := range names {
		gen, generated := p.Generated[n]
		data, mode := gen.Data, int64(0o644)
		if gen.Exec {
			mode = 0o755
		}
		if !generated {
			var err error
			if data, err = os.ReadFile(p.Files[n]); err != nil {
				return err
			}
			if fi, err := os.Stat(p.Files[n]); err == nil && fi.Mode()&0o111 != 0 {
				mode = 0o755
			}
		}
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     "package/" + n,
			Size:     int64(len(data)),
			Mode:     mode,
			ModTime:  ModTime,
			Format:   tar.FormatPAX,
		}
		if len(hdr.Name) <= 100 {
			hdr.Format = tar.FormatUSTAR
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// Limits on archives read by ReadArchive.
var (
	MaxBytes   int64 = 64 << 20
	MaxEntries       = 10_000
)

// ReadArchive unpacks a gzip'd npm tarball into dir (which must exist and
// be empty) and returns the path of its package root, dir/package.
func ReadArchive(r io.Reader, dir string) (string, error) {
	return readArchive(r, dir, false)
}

// ReadAnyArchive is ReadArchive for an archive of any one top directory
// (a Claude Code plugin's tarball), or none: it returns package/ when the
// archive has it, else the one directory all entries are in, else dir.
func ReadAnyArchive(r io.Reader, dir string) (string, error) {
	return readArchive(r, dir, true)
}

func readArchive(r io.Reader, dir string, anyRoot bool) (string, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return "", fmt.Errorf("not a gzip'd tarball: %w", err)
	}
	limited := &io.LimitedReader{R: gz, N: MaxBytes + 1}
	tr := tar.NewReader(limited)
	var total int64
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if limited.N <= 0 {
				return "", fmt.Errorf("archive is larger than %d bytes", MaxBytes)
			}
			return "", fmt.Errorf("bad tarball: %w", err)
		}
		if n >= MaxEntries {
			return "", fmt.Errorf("archive has more than %d entries", MaxEntries)
		}
		if hdr.Typeflag == tar.TypeDir || hdr.Typeflag == tar.TypeXGlobalHeader {
			continue // directories are made for the files in them
		}
		name, err := entryName(hdr.Name, anyRoot)
		if err != nil {
			return "", err
		}
		switch hdr.Typeflag {
		case tar.TypeReg:
		case tar.TypeSymlink, tar.TypeLink:
			return "", fmt.Errorf("archive entry %q is a link; packs hold regular files only", hdr.Name)
		default:
			return "", fmt.Errorf("archive entry %q is not a regular file (type %q)", hdr.Name, hdr.Typeflag)
		}
		total += hdr.Size
		if hdr.Size < 0 || total > MaxBytes {
			return "", fmt.Errorf("archive is larger than %d bytes", MaxBytes)
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", err
		}
		perm := fs.FileMode(0o644)
		if hdr.Mode&0o111 != 0 {
			perm = 0o755 // a skill's script
		}
		f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
		if err != nil {
			return "", fmt.Errorf("archive entry %q: %w", hdr.Name, err)
		}
		_, err = io.Copy(f, io.LimitReader(tr, hdr.Size))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			if limited.N <= 0 {
				return "", fmt.Errorf("archive is larger than %d bytes", MaxBytes)
			}
			return "", fmt.Errorf("archive entry %q: %w", hdr.Name, err)
		}
	}
	root := filepath.Join(dir, "package")
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		if !anyRoot {
			return "", errors.New("archive has no package/ directory")
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return "", err
		}
		if len(entries) == 1 && entries[0].IsDir() {
			return filepath.Join(dir, entries[0].Name()), nil
		}
		return dir, nil
	}
	return root, nil
}

// validateDir checks the persona directory named in package.json.
func validateDir(d string) error {
	if strings.HasPrefix(d, "/") || strings.Contains(d, `\`) || (len(d) >= 2 && d[1] == ':') {
		return fmt.Errorf("%q must be a relative path inside the pack", d)
	}
	for _, seg := range strings.Split(d, "/") {
		if seg == ".." {
			return fmt.Errorf("%q leaves the pack with \"..\"", d)
		}
	}
	return nil
}

// entryName checks an archive entry name: relative, no "..", under
// package/.
func entryName(name string, anyRoot bool) (string, error) {
	if name == "" || strings.ContainsRune(name, 0) || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) || strings.Contains(name, `\`) ||
		(len(name) >= 2 && name[1] == ':') {
		return "", fmt.Errorf("archive entry %q has an absolute or unsafe path", name)
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == ".." {
			return "", fmt.Errorf("archive entry %q leaves the archive with \"..\"", name)
		}
	}
	clean := path.Clean(name)
	if clean == "." {
		return "", fmt.Errorf("archive entry %q names the archive's root", name)
	}
	if !anyRoot && clean != "package" && !strings.HasPrefix(clean, "package/") {
		return "", fmt.Errorf("archive entry %q is outside package/", name)
	}
	return clean, nil
}
