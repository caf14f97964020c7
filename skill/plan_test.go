package skill

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/persona"
)

// tree makes files (a trailing "/" makes a directory, "a -> b" a symlink)
// below a fresh directory and returns it, symlinks resolved.
func tree(t *testing.T, files ...string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	for _, f := range files {
		if name, target, ok := strings.Cut(f, " -> "); ok {
			must(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
			must(t, os.Symlink(target, filepath.Join(root, name)))
			continue
		}
		p := filepath.Join(root, f)
		if strings.HasSuffix(f, "/") {
			must(t, os.MkdirAll(p, 0o755))
			continue
		}
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte("---\nname: "+filepath.Base(filepath.Dir(p))+"\ndescription: d\n---\n"), 0o644))
	}
	return root
}

// localSkill is a skill of the persona directory dir, as Load leaves it.
func localSkill(t *testing.T, dir, name string) persona.Skill {
	t.Helper()
	p := filepath.Join(dir, name)
	must(t, os.MkdirAll(p, 0o755))
	must(t, os.WriteFile(filepath.Join(p, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: The "+name+" skill.\n---\n"), 0o644))
	return persona.Skill{ID: name, Source: "./" + name, Path: p, Within: dir}
}

func TestPlacement(t *testing.T) {
	tests := []struct {
		name       string
		harness    string
		files      []string // the project, below root/
		cwd        string
		wantDir    string // relative to the tree; "" for an error
		wantErr    string
		wantHide   []string
		wantReplac []string
	}{
		{name: "claude at the root", harness: "claude", files: []string{".git/"}, wantDir: ".claude/skills"},
		{name: "claude in a sub-directory", harness: "claude", files: []string{".git/", "sub/"}, cwd: "sub", wantDir: ".claude/skills"},
		{name: "codex", harness: "codex", files: []string{".git/", "sub/"}, cwd: "sub", wantDir: ".agents/skills"},
		{name: "opencode", harness: "opencode", files: []string{".git/"}, wantDir: ".agents/skills"},
		{name: "codex without git reads its directory alone", harness: "codex", files: []string{"sub/"}, cwd: "sub", wantDir: "sub/.agents/skills"},
		{name: "claude without git walks up", harness: "claude", files: []string{"sub/"}, cwd: "sub", wantDir: ".claude/skills"},
		{name: "a nested repository stops the walk", harness: "opencode", files: []string{".git/", "sub/.git/", "sub/x/"}, cwd: "sub/x", wantDir: "sub/.agents/skills"},
		{name: "a .git file counts", harness: "codex", files: []string{".git/", "sub/.git", "sub/x/"}, cwd: "sub/x", wantDir: "sub/.agents/skills"},
		{name: "a clash is hidden", harness: "claude", files: []string{".git/", ".claude/skills/review/SKILL.md", ".claude/skills/review/x/y.txt", ".claude/skills/other/SKILL.md"},
			wantDir: ".claude/skills", wantHide: []string{".claude/skills/review/SKILL.md", ".claude/skills/review/x/y.txt"}, wantReplac: []string{".claude/skills/review"}},
		{name: "clashes in every directory opencode reads", harness: "opencode",
			files:   []string{".git/", ".agents/skills/review/SKILL.md", ".claude/skills/review -> ../../.agents/skills/review", ".codex/skills/review/SKILL.md"},
			wantDir: ".agents/skills", wantHide: []string{".agents/skills/review/SKILL.md", ".claude/skills/review"}, wantReplac: []string{".agents/skills/review", ".claude/skills/review"}},
		{name: "a clash on the way up", harness: "claude", files: []string{".git/", "sub/.claude/skills/review/SKILL.md"}, cwd: "sub",
			wantDir: ".claude/skills", wantHide: []string{"sub/.claude/skills/review/SKILL.md"}, wantReplac: []string{"sub/.claude/skills/review"}},
		{name: "a clash below the walk is not hidden", harness: "claude", files: []string{".git/", "sub/.claude/skills/review/SKILL.md"}, wantDir: ".claude/skills"},
		{name: "a symlinked skill directory inside the project", harness: "claude", files: []string{".git/", "config/claude/", ".claude -> config/claude"}, wantDir: "config/claude/skills"},
		{name: "a symlinked skill directory leading out", harness: "claude", files: []string{".git/", ".claude -> /"}, wantErr: "leads out of the project"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := tree(t, "personas/")
			root := tree(t, tt.files...)
			sk := localSkill(t, filepath.Join(base, "personas"), "review")
			boxTree := filepath.Join(t.TempDir(), "tree")
			p, err := NewPlan(Options{Skills: []persona.Skill{sk}, Harness: tt.harness, Root: root, Cwd: filepath.Join(root, tt.cwd), Tree: boxTree, Cache: &Cache{Dir: t.TempDir()}})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("NewPlan = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(boxTree, tt.wantDir); p.Dir != want {
				t.Errorf("Dir = %s, want %s", p.Dir, want)
			}
			it := p.Items[0]
			if it.Dest != filepath.Join(p.Dir, "review") || it.Cache != StateLocal || it.Path != sk.Path {
				t.Errorf("item = %+v", it)
			}
			if !slices.Equal(p.Hide(), tt.wantHide) {
				t.Errorf("Hide = %q, want %q", p.Hide(), tt.wantHide)
			}
			if !slices.Equal(it.Replaces, tt.wantReplac) {
				t.Errorf("Replaces = %q, want %q", it.Replaces, tt.wantReplac)
			}
			dirs := p.Dirs()
			if len(dirs) != 1 || dirs[0].Rel != filepath.ToSlash(filepath.Join(tt.wantDir, "review")) || dirs[0].Files[0].Path != "SKILL.md" {
				t.Errorf("Dirs = %+v", dirs)
			}
		})
	}
}

func TestPlanSkills(t *testing.T) {
	root := tree(t, ".git/")
	pdir := tree(t, "personas/")
	review := localSkill(t, filepath.Join(pdir, "personas"), "review")
	inline := persona.Skill{ID: "tidy", Source: "skills/tidy.md", Files: map[string]string{"SKILL.md": "---\nname: tidy\ndescription: d\n---\n"}}
	remote := persona.Skill{ID: "skill.sh/find-skills", Source: "https://github.com/acme/skills#find-skills"}
	unnamed := persona.Skill{ID: "acme/prober", Source: "npm:github:acme/probe"}
	c, f := newTestCache(t)
	o := Options{Skills: []persona.Skill{review, inline, remote, unnamed}, Harness: "claude", Version: "2.1.330", Root: root, Cwd: root, Tree: "/box/tree", Cache: c}
	p, err := NewPlan(o)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range p.Items {
		got = append(got, it.Name+" "+string(it.Kind)+" "+it.Cache)
	}
	want := []string{"review local local", "tidy inline inline", "find-skills skills.sh not cached", "prober npm not cached"}
	if !slices.Equal(got, want) {
		t.Errorf("items = %q, want %q", got, want)
	}
	if len(p.Notes) != 0 || f.calls.Load() != 0 {
		t.Errorf("notes %q, %d fetches; want none", p.Notes, f.calls.Load())
	}
	// Fetch gets the remote ones; the unnamed one turns out to be named
	// otherwise, and lands under its name.
	if err := p.Fetch(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if p.Items[3].Name != "probe" || p.Items[3].Dest != "/box/tree/.claude/skills/probe" || p.Items[2].Cache != StateCached {
		t.Errorf("after Fetch: %+v %+v", p.Items[2], p.Items[3])
	}
	if n := len(p.Dirs()); n != 4 {
		t.Errorf("%d directories, want 4", n)
	}
	// Cached now; with Refresh, fetched again.
	p, _ = NewPlan(o)
	if p.Items[2].Cache != StateCached || p.Items[2].CacheDir == "" {
		t.Errorf("second plan: %+v", p.Items[2])
	}
	o.Refresh = true
	p, _ = NewPlan(o)
	if p.Items[2].Cache != StateRefresh {
		t.Errorf("refresh plan: %+v", p.Items[2])
	}
	before := f.calls.Load()
	if err := p.Fetch(context.Background(), nil); err != nil || f.calls.Load() != before+2 {
		t.Errorf("refresh fetched %d, %v; want 2", f.calls.Load()-before, err)
	}

	// Errors name the skill, its source and its file.
	o.Refresh = false
	o.Version = "9.9.9"
	o.Skills = []persona.Skill{{ID: "gone", Source: "gone.md", Path: filepath.Join(pdir, "gone.md"), File: "/p/rev.json"}}
	if _, err := NewPlan(o); err == nil || !strings.Contains(err.Error(), `skill gone (source "gone.md", declared in /p/rev.json): skill not found`) {
		t.Errorf("missing skill: %v", err)
	}
	o.Skills = []persona.Skill{review, {ID: "again", Source: "./review", Path: review.Path, Within: review.Within}}
	if _, err := NewPlan(o); err == nil || !strings.Contains(err.Error(), `skills review and again both install as "review"`) {
		t.Errorf("two skills of one name: %v", err)
	}
	o.Skills = []persona.Skill{review}
	if p, err := NewPlan(o); err != nil || len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "claude 9.9.9 were not measured") {
		t.Errorf("unmeasured version: %v, notes %q", err, p.Notes)
	}
}
