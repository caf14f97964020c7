package persona

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
	"github.com/seed-3bc194a6/workforce/internal/skillmd"
)

func TestParseSkillSource(t *testing.T) {
	tests := []struct {
		source  string
		want    SkillSource
		wantErr string
	}{
		{source: "skills/review.md", want: SkillSource{Kind: SkillLocal, Ref: "skills/review.md", Name: "review", File: true}},
		{source: "./review.MD", want: SkillSource{Kind: SkillLocal, Ref: "review.MD", Name: "review", File: true}},
		{source: "skills/go-tests/SKILL.md", want: SkillSource{Kind: SkillLocal, Ref: "skills/go-tests/SKILL.md", Name: "go-tests", File: true}},
		{source: "SKILL.md", want: SkillSource{Kind: SkillLocal, Ref: "SKILL.md", Name: "SKILL", File: true}},
		{source: "./skills/review", want: SkillSource{Kind: SkillLocal, Ref: "skills/review", Name: "review"}},
		{source: "./review/", want: SkillSource{Kind: SkillLocal, Ref: "review", Name: "review"}},
		{source: "review", want: SkillSource{Kind: SkillLocal, Ref: "review", Name: "review"}},
		{source: "a/b/review", want: SkillSource{Kind: SkillLocal, Ref: "a/b/review", Name: "review"}},
		{source: "skills/review", want: SkillSource{Kind: SkillPrpm, Ref: "skills/review", Name: "review"}},
		{source: "@agent-workforce/persona-sidecars", want: SkillSource{Kind: SkillPrpm, Ref: "@agent-workforce/persona-sidecars", Name: "persona-sidecars"}},
		{source: "https://prpm.dev/packages/acme/lint-fix", want: SkillSource{Kind: SkillPrpm, Ref: "acme/lint-fix", Name: "lint-fix"}},
		{source: "https://prpm.dev/packages/acme/lint-fix/?v=2", want: SkillSource{Kind: SkillPrpm, Ref: "acme/lint-fix", Name: "lint-fix"}},
		{source: "https://github.com/vercel-labs/skills#find-skills", want: SkillSource{Kind: SkillGitHub, Ref: "https://github.com/vercel-labs/skills", Name: "find-skills"}},
		{source: "https://github.com/acme/tools.git#lint", want: SkillSource{Kind: SkillGitHub, Ref: "https://github.com/acme/tools", Name: "lint"}},
		{source: "https://github.com/acme/nextjs/tree/main/skills/anti-patterns", want: SkillSource{Kind: SkillGitHub, Ref: "https://github.com/acme/nextjs/tree/main", Name: "anti-patterns"}},
		{source: "npm:@acme/review-skill@1.2.0", want: SkillSource{Kind: SkillNpm, Ref: "@acme/review-skill@1.2.0", Name: "review-skill"}},
		{source: "npm:review-skill", want: SkillSource{Kind: SkillNpm, Ref: "review-skill", Name: "review-skill"}},
		{source: "npm:github:acme/review#v1", want: SkillSource{Kind: SkillNpm, Ref: "github:acme/review#v1"}},
		{source: "npm:", wantErr: "names no package"},
		{source: "npm:-rf", wantErr: "does not start with -"},
		{source: "npm:a b", wantErr: "no white space"},
		{source: "-x/y", wantErr: ""}, // a local directory; ValidateSkillPath accepts it
		{source: "https://example.com/skill", wantErr: "unsupported skill source"},
		{source: "file:///etc/passwd", wantErr: "unsupported skill source"},
		{source: "https://github.com/acme/tools#..", wantErr: "not a skill name"},
		{source: "../shared/review.md", wantErr: `leaves the persona's directory with ".."`},
		{source: "/abs/review.md", wantErr: "is absolute"},
		{source: `C:\skills\review.md`, wantErr: "names a drive"},
		{source: "./", wantErr: "names the persona's own directory"},
		{source: ".", wantErr: "names the persona's own directory"},
		{source: "skills/re view@x", wantErr: ""},
		{source: "skills/re@view", wantErr: "not a name a skill can install as"},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			got, err := ParseSkillSource(tt.source)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseSkillSource(%q) = %+v, %v; want error containing %q", tt.source, got, err, tt.wantErr)
				}
			case err != nil:
				t.Fatalf("ParseSkillSource(%q) = %v", tt.source, err)
			case tt.want.Kind != "" && got != tt.want:
				t.Errorf("ParseSkillSource(%q) = %+v, want %+v", tt.source, got, tt.want)
			}
		})
	}
}

// FuzzValidateSkillPath checks that an accepted local skill path stays
// below the directory it is joined to, and is not that directory.
func FuzzValidateSkillPath(f *testing.F) {
	for _, s := range []string{"skills/review", "./review.md", "../x", "/abs", `C:\x`, "./", ".", "a/./b", "a/../b", "a/..", "./.", "review/"} {
		f.Add(s)
	}
	dir := filepath.FromSlash("/base/personas")
	f.Fuzz(func(t *testing.T, p string) {
		if ValidateSkillPath(p) != nil {
			return
		}
		joined := filepath.Join(dir, filepath.FromSlash(cleanSkillPath(p)))
		if !pathutil.Within(dir, joined) || joined == dir {
			t.Fatalf("ValidateSkillPath(%q) accepted a path that leaves %s or is it: %s", p, dir, joined)
		}
		if src, err := ParseSkillSource(p); err == nil && src.Kind == SkillLocal {
			if j := filepath.Join(dir, filepath.FromSlash(src.Ref)); !pathutil.Within(dir, j) || j == dir {
				t.Fatalf("ParseSkillSource(%q).Ref = %q leaves %s", p, src.Ref, dir)
			}
		}
	})
}

const skillPersona = `{"id": "rev", "intent": "review", "description": "d", "harness": "claude", "model": "m", "skills": [%s]}`

func TestLoadSkills(t *testing.T) {
	good := "---\nname: review\ndescription: Reviews.\n---\nBody\n"
	tests := []struct {
		name         string
		skills       string // the skills array's members
		files        string // txtar of more files below base/
		wantErr      string // in the catalog's errors
		wantWarn     string
		loaded       bool // the persona loads
		wantPath     string
		wantBuiltin  bool
		wantBadField string
	}{
		{name: "file", skills: `{"id": "r", "source": "skills/review.md"}`,
			files: "-- base/skills/review.md --\n" + good, loaded: true, wantPath: "base/skills/review.md"},
		{name: "directory", skills: `{"id": "r", "source": "./skills/review"}`,
			files: "-- base/skills/review/SKILL.md --\n" + good + "-- base/skills/review/ref.txt --\nx\n", loaded: true, wantPath: "base/skills/review"},
		{name: "SKILL.md in its directory", skills: `{"id": "r", "source": "skills/review/SKILL.md"}`,
			files: "-- base/skills/review/SKILL.md --\n" + good, loaded: true},
		{name: "a prpm reference that names a local directory", skills: `{"id": "r", "source": "skills/review"}`,
			files: "-- base/skills/review/SKILL.md --\n" + good, loaded: true, wantWarn: `skill source "skills/review" reads as the prpm package skills/review, as in agentworkforce 4.0.2, though skills/review is beside the persona file: write "./skills/review"`},
		{name: "remote", skills: `{"id": "r", "source": "npm:@acme/review"}, {"id": "s", "source": "https://github.com/vercel-labs/skills#find-skills"}`, loaded: true},
		{name: "missing file", skills: `{"id": "r", "source": "skills/review.md"}`, loaded: true,
			wantErr: "base/rev.json: skills.0.source: skill not found: ", wantPath: "base/skills/review.md"},
		{name: "missing SKILL.md", skills: `{"id": "r", "source": "./skills/review"}`,
			files: "-- base/skills/review/notes.md --\nx\n", loaded: true, wantErr: "holds no SKILL.md"},
		{name: "bad front matter", skills: `{"id": "r", "source": "skills/review.md"}`,
			files: "-- base/skills/review.md --\n---\nname: review\ndescription: \"\"\n---\n", loaded: true,
			wantErr: "base/skills/review.md:3: description is empty"},
		{name: "name differs from the file", skills: `{"id": "r", "source": "skills/lint.md"}`,
			files: "-- base/skills/lint.md --\n" + good, loaded: true, wantErr: `base/skills/lint.md:2: name "review" differs from "lint"`},
		{name: "name differs from the directory", skills: `{"id": "r", "source": "./skills/lint"}`,
			files: "-- base/skills/lint/SKILL.md --\n" + good, loaded: true, wantErr: `name "review" differs from the skill's directory name "lint"`},
		{name: "a file where a directory is wanted", skills: `{"id": "r", "source": "./skills/review"}`,
			files: "-- base/skills/review --\nx\n", loaded: true, wantErr: "is not a directory"},
		{name: "unsupported", skills: `{"id": "r", "source": "https://example.com/x"}`, wantErr: "rev.json:1:"},
		{name: "unsafe", skills: `{"id": "r", "source": "../review.md"}`, wantErr: `skills.0.source: skill path "../review.md" leaves`},
		{name: "inline", skills: `{"id": "r", "source": "skills/review.md", "files": {"SKILL.md": "---\nname: review\ndescription: Reviews.\n---\n", "scripts/a.sh": "echo"}}`, loaded: true},
		{name: "inline without SKILL.md", skills: `{"id": "r", "source": "x", "files": {"a.md": "x"}}`, wantErr: "skills.0.files: an inline skill's files hold SKILL.md"},
		{name: "inline unsafe path", skills: `{"id": "r", "source": "x", "files": {"SKILL.md": "x", "../a": "x"}}`, wantErr: `skills.0.files: skill file path "../a" leaves`},
		{name: "inline bad front matter", skills: `{"id": "r", "source": "x", "files": {"SKILL.md": "no front matter"}}`, loaded: true, wantErr: "SKILL.md of skill r:1: no front matter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := strings.ReplaceAll(skillPersona, "%s", tt.skills)
			cat, root := loadTree(t, "-- base/rev.json --\n"+data+"\n"+tt.files)
			errs := strings.Join(diagStrings(cat.Errors, root), "\n")
			warns := strings.Join(diagStrings(cat.Warnings, root), "\n")
			if tt.wantErr == "" && errs != "" || !strings.Contains(errs, tt.wantErr) {
				t.Errorf("errors:\n%s\nwant one containing %q", errs, tt.wantErr)
			}
			if !strings.Contains(warns, tt.wantWarn) {
				t.Errorf("warnings:\n%s\nwant one containing %q", warns, tt.wantWarn)
			}
			p, ok := cat.Get("rev")
			if ok != tt.loaded {
				t.Fatalf("persona loaded = %v, want %v", ok, tt.loaded)
			}
			if ok && tt.wantPath != "" {
				if got := p.Spec.Skills[0].Path; got != filepath.Join(root, tt.wantPath) {
					t.Errorf("Skills[0].Path = %q, want %q", got, filepath.Join(root, tt.wantPath))
				}
				if got := p.Spec.Skills[0].File; got != filepath.Join(root, "base/rev.json") {
					t.Errorf("Skills[0].File = %q, want the persona file", got)
				}
			}
		})
	}
}

func TestLoadSkillSymlinkEscape(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "outside/review.md"), "---\nname: review\ndescription: d\n---\n")
	write(t, filepath.Join(root, "outside/lint/SKILL.md"), "---\nname: lint\ndescription: d\n---\n")
	write(t, filepath.Join(root, "base/rev.json"), strings.ReplaceAll(skillPersona, "%s", `{"id": "r", "source": "review.md"}`))
	write(t, filepath.Join(root, "base/dir.json"), strings.ReplaceAll(strings.ReplaceAll(skillPersona, "%s", `{"id": "r", "source": "./lint"}`), `"rev"`, `"dir"`))
	must(t, os.Symlink(filepath.Join(root, "outside/review.md"), filepath.Join(root, "base/review.md")))
	must(t, os.Mkdir(filepath.Join(root, "base/lint"), 0o755))
	must(t, os.Symlink(filepath.Join(root, "outside/lint/SKILL.md"), filepath.Join(root, "base/lint/SKILL.md")))
	cat := LoadLayers([]Layer{{Name: "base", Dir: filepath.Join(root, "base")}})
	errs := strings.Join(diagStrings(cat.Errors, root), "\n")
	if !strings.Contains(errs, "base/rev.json: skills.0.source: skill \"review.md\" resolves through a symlink to") {
		t.Errorf("errors:\n%s\nwant the file's escape named", errs)
	}
	if _, ok := cat.Get("rev"); ok {
		t.Errorf("a persona whose skill leads out of its directory loaded")
	}
	// A directory whose SKILL.md leads out: loading reads SKILL.md
	// through the link, reading the skill refuses it.
	p, ok := cat.Get("dir")
	if !ok {
		t.Fatalf("dir did not load: %s", errs)
	}
	if _, err := ReadSkill(p.Spec.Skills[0]); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("ReadSkill of a skill whose SKILL.md leads out = %v, want an error", err)
	}
}

func TestLoadSkillFromProjectRoot(t *testing.T) {
	root := t.TempDir()
	pdir := filepath.Join(root, home.ProjectDir)
	write(t, filepath.Join(pdir, "rev.json"), strings.ReplaceAll(skillPersona, "%s", `{"id": "r", "source": ".agentworkforce/workforce/skills/review.md"}`))
	write(t, filepath.Join(root, ".agentworkforce/workforce/skills/review.md"), "---\nname: review\ndescription: d\n---\n")
	cat := LoadLayers([]Layer{{Name: LayerProject, Dir: pdir}})
	if len(cat.Errors) > 0 {
		t.Fatalf("errors: %v", cat.Errors)
	}
	warns := strings.Join(diagStrings(cat.Warnings, root), "\n")
	if !strings.Contains(warns, "from the project root as agentworkforce 4.0.2 resolved it") {
		t.Errorf("warnings:\n%s\nwant the project-root fallback named", warns)
	}
	p, _ := cat.Get("rev")
	if got, want := p.Spec.Skills[0].Path, filepath.Join(root, ".agentworkforce/workforce/skills/review.md"); got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
	c, err := ReadSkill(p.Spec.Skills[0])
	if err != nil || c.Name != "review" || len(c.Files) != 1 || c.Files[0].Path != "SKILL.md" {
		t.Errorf("ReadSkill = %+v, %v", c, err)
	}
	// Outside a project layer directory, there is no fallback.
	other := filepath.Join(root, "elsewhere")
	write(t, filepath.Join(other, "rev.json"), strings.ReplaceAll(skillPersona, "%s", `{"id": "r", "source": ".agentworkforce/workforce/skills/review.md"}`))
	cat = LoadLayers([]Layer{{Name: "user", Dir: other}})
	if len(cat.Errors) != 1 || !errors.Is(errors.New(cat.Errors[0].Message), skillmd.ErrMissing) && !strings.Contains(cat.Errors[0].Message, skillmd.ErrMissing.Error()) {
		t.Errorf("errors = %v, want the skill missing", cat.Errors)
	}
}

func TestBuiltinSkills(t *testing.T) {
	local := strings.ReplaceAll(skillPersona, "%s", `{"id": "r", "source": "skills/review.md"}`)
	cat := LoadLayers([]Layer{BuiltinLayer([]File{{Name: "rev.json", Data: []byte(local)}})})
	if len(cat.Errors) != 1 || !strings.Contains(cat.Errors[0].Message, "must carry its local skills inline") {
		t.Errorf("errors = %v, want a built-in's local skill refused", cat.Errors)
	}
	inline := strings.ReplaceAll(skillPersona, "%s", `{"id": "r", "source": "skills/review.md", "files": {"SKILL.md": "---\nname: review\ndescription: d\n---\n"}}`)
	cat = LoadLayers([]Layer{BuiltinLayer([]File{{Name: "rev.json", Data: []byte(inline)}})})
	if len(cat.Errors) != 0 {
		t.Errorf("errors = %v, want an inline skill accepted", cat.Errors)
	}
	p, _ := cat.Get("rev")
	c, err := ReadSkill(p.Spec.Skills[0])
	if err != nil || c.Name != "review" || string(c.Files[0].Data) != "---\nname: review\ndescription: d\n---\n" {
		t.Errorf("ReadSkill = %+v, %v", c, err)
	}
}
