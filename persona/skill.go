package persona

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/internal/lazyre"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
	"github.com/seed-3bc194a6/workforce/internal/skillmd"
)

// Skills are Agent Skills: a directory holding SKILL.md, whose YAML front
// matter names the skill and describes it, then the instructions, and the
// resources the instructions refer to. A harness advertises each skill's
// name and description to the model and reads the rest on demand.
//
// A persona's skill names its source in one of these forms, tried in this
// order (the forms of agentworkforce 4.0.2 keep their meaning):
//
//	npm:<spec>                                   an npm package (SkillNpm)
//	https://prpm.dev/packages/<scope>/<name>     a prpm package (SkillPrpm)
//	https://github.com/<org>/<repo>#<skill>      a skills.sh skill (SkillGitHub)
//	https://github.com/<org>/<repo>/tree/<ref>/<path-to-skill>
//	<path>.md                                    a local file (SkillLocal, File)
//	./<path>                                     a local directory (SkillLocal)
//	<scope>/<name>                               a prpm package (SkillPrpm)
//	<path>                                       any other path: a local directory
//
// A local path is relative to the persona file that declares the skill,
// with the rules of a sidecar path (no "..", not absolute) and the same
// check that symlinks do not lead out of the persona's directory. A ".md"
// file installs as <name>/SKILL.md, where name is the file's stem, or the
// name of its directory when the file is SKILL.md; a directory installs as
// itself. A local directory of one slash ("skills/review") reads as a prpm
// reference, as in agentworkforce 4.0.2: write "./skills/review".
//
// Skill.Files, when set, is the skill inline (the generator writes it for
// the built-in catalog): SKILL.md and the other files by slash path; the
// source then only says where the skill came from.
//
// What a skill holds, SKILL.md's front matter and the files of its
// directory, is internal/skillmd's: this file parses the sources a
// persona writes and anchors and checks a persona's local skills with it.

// SkillKind is the kind of a skill source.
type SkillKind string

// Skill source kinds.
const (
	// SkillLocal is a .md file or a skill directory beside the persona.
	SkillLocal SkillKind = "local"
	// SkillInline is a skill carried in the persona file (Skill.Files).
	SkillInline SkillKind = "inline"
	// SkillNpm is an npm package holding a skill, fetched with npm pack.
	SkillNpm SkillKind = "npm"
	// SkillGitHub is a skill of a GitHub repository, installed by the
	// skills.sh installer (npx skills add).
	SkillGitHub SkillKind = "skills.sh"
	// SkillPrpm is a prpm package, installed by npx prpm install.
	SkillPrpm SkillKind = "prpm"
)

// SkillSource is a skill source, parsed.
type SkillSource struct {
	Kind SkillKind `json:"kind"`
	// Ref is, for a local source, the path without a leading "./"; for
	// npm, the spec given to npm pack; for skills.sh, the repository URL
	// given to the installer (with /tree/<ref> for a tree URL); for prpm,
	// <scope>/<name>.
	Ref string `json:"ref"`
	// Name is the name the skill installs as, when the source tells it:
	// a local file's stem, a local directory's name, the skill named by a
	// skills.sh URL, a prpm package's name, an npm package's name without
	// its scope. A fetched skill's SKILL.md has the last word.
	Name string `json:"name,omitempty"`
	// File says a local source is a .md file rather than a directory.
	File bool `json:"file,omitempty"`
}

var (
	urlScheme   = lazyre.New(`^[A-Za-z][A-Za-z0-9+.-]*://`)
	prpmURL     = lazyre.New(`(?i)^https?://prpm\.dev/packages/([^/\s?#]+)/([^/\s?#]+)/?(?:[?#].*)?$`)
	prpmBare    = lazyre.New(`^([^/\s]+)/([^/\s]+)$`)
	githubSkill = lazyre.New(`(?i)^(https?://github\.com/[^/\s?#]+/[^/\s?#]+?)(?:\.git)?#([^\s?#]+)$`)
	githubTree  = lazyre.New(`(?i)^(https?://github\.com/[^/\s?#]+/[^/\s?#]+?)(?:\.git)?/tree/([^/\s?#]+)/([^?#]+?)(?:[?#].*)?$`)
	// installName is what agentworkforce 4.0.2 accepts as the name a
	// remote skill installs as.
	installName = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// skillForms lists the source forms, for errors.
const skillForms = `a local path ("skills/review.md", "./skills/review"), "npm:<package>", ` +
	`a prpm package ("https://prpm.dev/packages/<scope>/<name>" or "<scope>/<name>"), ` +
	`or a GitHub skill for skills.sh ("https://github.com/<org>/<repo>#<skill>", "https://github.com/<org>/<repo>/tree/<ref>/<path>")`

// ParseSkillSource parses a skill source as written in a persona file. It
// does not touch the file system; a local path is checked for syntax only
// (ValidateSkillPath).
func ParseSkillSource(source string) (SkillSource, error) {
	if spec, ok := strings.CutPrefix(source, "npm:"); ok {
		switch {
		case spec == "":
			return SkillSource{}, fmt.Errorf("skill source %q names no package; want npm:<package>[@<version>]", source)
		case strings.ContainsAny(spec, " \t\r\n\x00"):
			return SkillSource{}, fmt.Errorf("skill source %q: an npm spec has no white space", source)
		case spec[0] == '-':
			return SkillSource{}, fmt.Errorf("skill source %q: an npm spec does not start with -", source)
		}
		return SkillSource{Kind: SkillNpm, Ref: spec, Name: npmName(spec)}, nil
	}
	if urlScheme().MatchString(source) {
		if m := prpmURL().FindStringSubmatch(source); m != nil {
			ref := m[1] + "/" + m[2]
			if !remoteName(m[2]) || strings.HasPrefix(ref, "-") {
				return SkillSource{}, fmt.Errorf("skill source %q: %q is not a package name a skill can install as", source, m[2])
			}
			return SkillSource{Kind: SkillPrpm, Ref: ref, Name: m[2]}, nil
		}
		if m := githubSkill().FindStringSubmatch(source); m != nil {
			if !remoteName(m[2]) {
				return SkillSource{}, fmt.Errorf("skill source %q: %q is not a skill name", source, m[2])
			}
			return SkillSource{Kind: SkillGitHub, Ref: m[1], Name: m[2]}, nil
		}
		if m := githubTree().FindStringSubmatch(source); m != nil {
			segs := strings.FieldsFunc(m[3], func(r rune) bool { return r == '/' })
			name := ""
			if len(segs) > 0 {
				name = segs[len(segs)-1]
			}
			if !remoteName(name) {
				return SkillSource{}, fmt.Errorf("skill source %q: %q is not a skill name", source, name)
			}
			return SkillSource{Kind: SkillGitHub, Ref: m[1] + "/tree/" + m[2], Name: name}, nil
		}
		return SkillSource{}, fmt.Errorf("unsupported skill source %q; want %s", source, skillForms)
	}
	local := func(file bool) (SkillSource, error) {
		if err := ValidateSkillPath(source); err != nil {
			return SkillSource{}, err
		}
		p := strings.TrimRight(cleanSkillPath(source), "/")
		base := path.Base(p)
		name := base
		if file {
			name = strings.TrimSuffix(base, base[len(base)-3:])
			if name == "SKILL" && strings.Contains(p, "/") {
				name = path.Base(path.Dir(p))
			}
		}
		return SkillSource{Kind: SkillLocal, Ref: p, Name: name, File: file}, nil
	}
	switch {
	case len(source) > 3 && strings.EqualFold(source[len(source)-3:], ".md"):
		return local(true)
	case source == "." || strings.HasPrefix(source, "./") || strings.HasPrefix(source, "../") || source == "..":
		return local(false)
	}
	if m := prpmBare().FindStringSubmatch(source); m != nil && !strings.HasPrefix(source, "-") {
		if !remoteName(m[2]) {
			return SkillSource{}, fmt.Errorf("skill source %q reads as a prpm package <scope>/<name>, and %q is not a name a skill can install as; write ./%s for a local directory", source, m[2], source)
		}
		return SkillSource{Kind: SkillPrpm, Ref: source, Name: m[2]}, nil
	}
	return local(false)
}

// remoteName reports whether s is a name a remote skill may install as.
func remoteName(s string) bool { return installName().MatchString(s) && s != "." && s != ".." }

// npmName returns the package name of an npm registry spec without its
// scope and version ("@acme/review@1.2.0" -> "review"), or "" for other
// specs (URLs, git, files).
func npmName(spec string) string {
	if strings.Contains(spec, ":") {
		return ""
	}
	name := spec
	if strings.HasPrefix(name, "@") {
		scope, rest, ok := strings.Cut(name[1:], "/")
		if !ok || scope == "" {
			return ""
		}
		name = rest
	} else if strings.Contains(name, "/") {
		return "" // a path or a GitHub shorthand
	}
	name, _, _ = strings.Cut(name, "@")
	if skillmd.ValidateName(name) != nil {
		return ""
	}
	return name
}

// cleanSkillPath drops leading "./" elements.
func cleanSkillPath(p string) string {
	for strings.HasPrefix(p, "./") {
		p = strings.TrimLeft(p[2:], "/")
	}
	return p
}

// ValidateSkillPath checks a local skill source as written: a relative
// POSIX path with the rules of a sidecar path (ValidatePath) that names a
// file or a directory below the persona's directory, not that directory
// itself. It does not touch the file system.
func ValidateSkillPath(p string) error {
	if err := validateRel("skill path", p); err != nil {
		return err
	}
	if c := strings.TrimRight(cleanSkillPath(p), "/"); c == "" || c == "." || path.Clean(c) == "." {
		return fmt.Errorf("skill path %q names the persona's own directory; want a skill's .md file or directory below it", p)
	}
	return nil
}

// ValidateSkillFilePath checks the path of a file of an inline skill
// (Skill.Files): a relative slash path inside the skill's directory.
func ValidateSkillFilePath(p string) error {
	if err := validateRel("skill file path", p); err != nil {
		return err
	}
	if c := path.Clean(p); c == "." || strings.HasSuffix(p, "/") {
		return fmt.Errorf("skill file path %q names no file", p)
	}
	return nil
}

// ReadSkill reads a persona's skill whole: an inline one from Files, a
// local one from Path (set by Load or Anchor), and checks its SKILL.md as
// Anchor does. Remote skills are the skill package's business.
func ReadSkill(sk Skill) (*skillmd.Content, error) {
	if len(sk.Files) > 0 {
		return inlineSkill(sk)
	}
	src, err := ParseSkillSource(sk.Source)
	if err != nil {
		return nil, err
	}
	if src.Kind != SkillLocal {
		return nil, fmt.Errorf("skill %s: %s sources are fetched, not read", sk.ID, src.Kind)
	}
	if sk.Path == "" {
		return nil, fmt.Errorf("skill %s: source %q was not resolved against its persona file", sk.ID, sk.Source)
	}
	if src.File {
		return skillmd.ReadFile(sk.Path, src.Name)
	}
	within := sk.Within
	if within == "" {
		within = filepath.Dir(sk.Path)
	}
	return skillmd.ReadDir(sk.Path, within, src.Name)
}

func inlineSkill(sk Skill) (*skillmd.Content, error) {
	data, ok := sk.Files["SKILL.md"]
	if !ok {
		return nil, fmt.Errorf("skill %s: its files hold no SKILL.md", sk.ID)
	}
	meta, err := skillmd.Parse("SKILL.md of skill "+sk.ID, []byte(data))
	if err != nil {
		return nil, err
	}
	c := &skillmd.Content{Meta: *meta}
	for p, d := range sk.Files {
		if err := ValidateSkillFilePath(p); err != nil {
			return nil, fmt.Errorf("skill %s: %v", sk.ID, err)
		}
		c.Files = append(c.Files, skillmd.File{Path: path.Clean(p), Data: []byte(d)})
	}
	sort.Slice(c.Files, func(i, j int) bool { return c.Files[i].Path < c.Files[j].Path })
	return c, nil
}

// checkSkill checks a local skill at load time: the file or directory
// exists and its SKILL.md's front matter is valid and names it as its
// path does. It reads SKILL.md only.
func checkSkill(src SkillSource, abs string) error {
	if src.File {
		_, err := skillmd.ReadFile(abs, src.Name)
		return err
	}
	return skillmd.CheckDir(abs, src.Name)
}

// skillField is the dotted name of skill i's source.
func skillField(i int) string { return "skills." + strconv.Itoa(i) + ".source" }

// anchorSkills resolves the local skill sources of spec, read from file in
// dir (absolute; realDir its symlink-free form), and checks each skill:
// Skill.Path gets the absolute path, Skill.Within the directory it must
// stay in, Skill.File the declaring file. A source that leads out of the
// persona's directory through a symlink is an error (fatal); a skill that
// is missing or whose SKILL.md is not valid is a problem: the persona
// still loads, and run refuses it. A persona file in a project layer
// directory (ProjectDir) whose local skill is not beside it but at that
// path from the project root, where agentworkforce 4.0.2 looked, gets it
// from there with a warning.
func anchorSkills(spec *Spec, file, dir, realDir string, builtin bool) (warns, problems []*diag.Diagnostic, fatal diag.Errors) {
	for i := range spec.Skills {
		sk := &spec.Skills[i]
		sk.File = file
		if len(sk.Files) > 0 {
			if _, err := inlineSkill(*sk); err != nil {
				problems = append(problems, &diag.Diagnostic{File: file, Field: skillField(i), Message: err.Error()})
			}
			continue
		}
		src, err := ParseSkillSource(sk.Source)
		if err == nil && src.Kind == SkillPrpm && src.Ref == sk.Source && dir != "" {
			if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(src.Ref))); err == nil {
				warns = append(warns, &diag.Diagnostic{File: file, Field: skillField(i),
					Message: fmt.Sprintf("skill source %q reads as the prpm package %s, as in agentworkforce 4.0.2, though %s is beside the persona file: write \"./%s\" for the local skill", sk.Source, src.Ref, src.Ref, src.Ref)})
			}
		}
		if err != nil || src.Kind != SkillLocal {
			continue // Parse reported it, or it is fetched at run time
		}
		if builtin {
			fatal = append(fatal, &diag.Diagnostic{File: file, Field: skillField(i),
				Message: "a built-in persona must carry its local skills inline; run go generate"})
			continue
		}
		abs := filepath.Join(dir, filepath.FromSlash(src.Ref))
		within := realDir
		if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
			if root, ok := home.ProjectRootOf(dir); ok {
				alt := filepath.Join(root, filepath.FromSlash(src.Ref))
				if _, err := os.Lstat(alt); err == nil {
					realRoot, err := filepath.EvalSymlinks(root)
					if err == nil {
						warns = append(warns, &diag.Diagnostic{File: file, Field: skillField(i),
							Message: fmt.Sprintf("skill %q is not beside the persona file; using %s, from the project root as agentworkforce 4.0.2 resolved it: move it beside the persona file", sk.Source, alt)})
						abs, within = alt, realRoot
					}
				}
			}
		}
		real, err := filepath.EvalSymlinks(abs)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			problems = append(problems, &diag.Diagnostic{File: file, Field: skillField(i),
				Message: fmt.Sprintf("%v: %s does not exist", skillmd.ErrMissing, abs)})
			sk.Path, sk.Within = abs, within
			continue
		case err != nil:
			fatal = append(fatal, &diag.Diagnostic{File: file, Field: skillField(i), Message: fmt.Sprintf("cannot resolve skill %s: %v", abs, err)})
			continue
		case !pathutil.Within(within, real):
			fatal = append(fatal, &diag.Diagnostic{File: file, Field: skillField(i),
				Message: fmt.Sprintf("skill %q resolves through a symlink to %s, outside the persona directory %s", sk.Source, real, within)})
			continue
		}
		sk.Path, sk.Within = abs, within
		if err := checkSkill(src, abs); err != nil {
			problems = append(problems, &diag.Diagnostic{File: file, Field: skillField(i), Message: err.Error()})
		}
	}
	return warns, problems, fatal
}

// AnchorSkills resolves and checks the local skills of spec, read from
// file, as loading does (Skill.Path, Within and File set); a missing skill
// or an invalid SKILL.md, which loading reports and lets the persona load
// with, is an error here, as at every other boundary (pack, install,
// generate).
func AnchorSkills(spec *Spec, file string) (warnings []*diag.Diagnostic, err error) {
	if len(spec.Skills) == 0 {
		return nil, nil
	}
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return nil, err
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, &diag.Diagnostic{File: file, Message: fmt.Sprintf("cannot resolve the persona directory: %v", err)}
	}
	warns, problems, fatal := anchorSkills(spec, file, dir, realDir, false)
	fatal = append(fatal, problems...)
	if len(fatal) > 0 {
		return warns, fatal
	}
	return warns, nil
}
