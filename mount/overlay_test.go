package mount

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// writeTree writes files (slash paths relative to root, to content) under
// root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// overlayFixture makes a real tree and an overlay sandbox of it, its
// working directory sub/, AGENTS.md hidden, .env ignored.
func overlayFixture(t *testing.T) (*Sandbox, string) {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a.txt": "a", "b.txt": "b", "sub/c.txt": "c", "sub/deep/d.txt": "d", "gone/x.txt": "x", "gone/in/y.txt": "y",
		".agentignore": ".env\n", ".env": "SECRET=1", "sub/.env": "SECRET=2", "node_modules/m/index.js": "m",
		"AGENTS.md": "real agents", "sub/AGENTS.md": "real sub agents", ".agentreadonly": "ro.txt\n", "ro.txt": "ro",
		".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n", ".git/info/exclude": "# user's\n",
		".claude/settings.json": "{}",
	})
	s, err := create(context.Background(), Options{
		Home: t.TempDir(), Persona: "p", Root: root, Cwd: filepath.Join(root, "sub"),
		Hide: []string{"AGENTS.md"}, Overlay: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, root
}

// TestOverlayCreate: an overlay sandbox is its directories, no copy: the
// upper and work directories, the tree empty but for the way to the
// working directory, the whiteouts what a copy leaves out; what workforce
// materializes goes into the upper layer, and Open reads it all back.
func TestOverlayCreate(t *testing.T) {
	s, root := overlayFixture(t)
	ov := s.Overlay
	if ov == nil {
		t.Fatal("Overlay is nil")
	}
	for _, d := range []string{ov.Upper, ov.Work, s.Workdir} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Errorf("%s: not a directory (%v)", d, err)
		}
	}
	if ov.Upper != filepath.Join(s.Dir, UpperDir) || ov.Work != filepath.Join(s.Dir, WorkDir) {
		t.Errorf("layers %s %s, want under %s", ov.Upper, ov.Work, s.Dir)
	}
	for rel := range snapshot(t, s.Tree) {
		if rel != "." && rel != "sub" {
			t.Errorf("the tree holds %s", rel)
		}
	}
	want := []string{".env", "AGENTS.md", "node_modules", "sub/.env", "sub/AGENTS.md"}
	if !slices.Equal(ov.Whiteouts, want) {
		t.Errorf("Whiteouts = %q, want %q", ov.Whiteouts, want)
	}
	if ov.Started.IsZero() {
		t.Error("Started is zero")
	}
	p, err := s.Materialize("AGENTS.md", "persona")
	must(t, err)
	if p != filepath.Join(s.Workdir, "AGENTS.md") {
		t.Errorf("Materialize returned %s", p)
	}
	up := filepath.Join(ov.Upper, "sub", "AGENTS.md")
	if data, err := os.ReadFile(up); err != nil || string(data) != "persona" {
		t.Errorf("upper layer's AGENTS.md: %q, %v", data, err)
	}
	if s.AgentPath("sub/AGENTS.md") != up {
		t.Errorf("AgentPath = %s", s.AgentPath("sub/AGENTS.md"))
	}
	if slices.Contains(ov.Whiteouts, "sub/AGENTS.md") {
		t.Error("the materialized file is still a whiteout")
	}
	if data, _ := os.ReadFile(filepath.Join(ov.Upper, ".git", "info", "exclude")); string(data) != "# user's\n\n/sub/AGENTS.md\n" {
		t.Errorf("upper info/exclude = %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(root, ".git", "info", "exclude")); string(data) != "# user's\n" {
		t.Errorf("the real info/exclude changed: %q", data)
	}
	_, err = s.MaterializeDir(Dir{Rel: "node_modules/skill", Files: []DirFile{{Path: "s/SKILL.md", Data: []byte("x")}}})
	must(t, err)
	if v, err := getxattr(filepath.Join(ov.Upper, "node_modules"), opaqueXattr); err != nil || v != "y" {
		t.Errorf("a materialized directory in a hidden one: not opaque (%q, %v)", v, err)
	}
	must(t, s.Save())

	o, err := Open(s.Dir)
	must(t, err)
	if o.Overlay == nil || o.Overlay.Upper != ov.Upper || o.Overlay.Work != ov.Work ||
		!slices.Equal(o.Overlay.Whiteouts, s.Overlay.Whiteouts) || !o.Overlay.Started.Equal(ov.Started) {
		t.Errorf("Open: overlay %+v, want %+v", o.Overlay, ov)
	}
	if !o.materialize["sub/AGENTS.md"] || !o.materialize["node_modules/skill/s/SKILL.md"] {
		t.Errorf("Open: materialized %v", o.materialize)
	}
	if o.Workdir != s.Workdir {
		t.Errorf("Open: Workdir %s, want %s", o.Workdir, s.Workdir)
	}
	if err := o.Park(filepath.Join(t.TempDir(), "warm")); err == nil {
		t.Error("Park of an overlay sandbox: no error")
	}
	if _, err := o.Live(LiveOptions{}); err == nil {
		t.Error("Live of an overlay sandbox: no error")
	}
	must(t, os.Chmod(filepath.Join(ov.Work), 0o000)) // as overlayfs leaves it
	must(t, o.Remove())
	if _, err := os.Lstat(s.Dir); !os.IsNotExist(err) {
		t.Errorf("Remove left %s: %v", s.Dir, err)
	}
}
