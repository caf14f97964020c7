package mount

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

func TestRules(t *testing.T) {
	root := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, ".agentignore"), []byte("# comment\n*.log\n!keep.log\nbuild/\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, ".rev.agentignore"), []byte("secrets/\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, ".agentreadonly"), []byte("go.sum\nvendor/\n"), 0o644))
	r, err := NewRules(Options{Root: root, Persona: "rev", Ignore: []string{"tmp"}, Readonly: []string{"*.lock"}, Hide: []string{"AGENTS.md", ".claude/CLAUDE.md"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rel                       string
		dir                       bool
		ignored, hidden, readonly bool
	}{
		{rel: "main.go"},
		{rel: "debug.log", ignored: true},
		{rel: "sub/x.log", ignored: true},
		{rel: "keep.log"},
		{rel: "build", dir: true, ignored: true},
		{rel: "build/out.bin", ignored: true},
		{rel: "secrets/key", ignored: true},
		{rel: "tmp/x", ignored: true},
		{rel: "node_modules/a/index.js", ignored: true},
		{rel: ".git/config"},
		{rel: "AGENTS.md", hidden: true},
		{rel: "a/b/AGENTS.md", hidden: true},
		{rel: "a/NOT-AGENTS.md"},
		{rel: ".claude/CLAUDE.md", hidden: true},
		{rel: "x/.claude/CLAUDE.md", hidden: true},
		{rel: "CLAUDE.md"},
		{rel: "go.sum", readonly: true},
		{rel: "vendor/m/a.go", readonly: true},
		{rel: "Cargo.lock", readonly: true},
	}
	for _, tt := range tests {
		if got := r.Ignored(tt.rel, tt.dir); got != tt.ignored {
			t.Errorf("ignored(%q) = %v, want %v", tt.rel, got, tt.ignored)
		}
		if got := r.hidden(tt.rel); got != tt.hidden {
			t.Errorf("hidden(%q) = %v, want %v", tt.rel, got, tt.hidden)
		}
		if got := r.isReadonly(tt.rel); got != tt.readonly {
			t.Errorf("readonly(%q) = %v, want %v", tt.rel, got, tt.readonly)
		}
	}
}

// fixture makes a real tree and a session of it.
func fixture(t *testing.T) (*Sandbox, string) {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"a.txt": "a", "b.txt": "b", "c.txt": "c", "d.txt": "d", "sub/e.txt": "e", "ro.txt": "ro",
		".agentreadonly": "ro.txt\n", "AGENTS.md": "real agents",
	}
	for name, content := range files {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
		must(t, os.WriteFile(filepath.Join(root, name), []byte(content), 0o644))
	}
	s, err := create(context.Background(), Options{Home: t.TempDir(), Persona: "p", Root: root, Cwd: filepath.Join(root, "sub"), Hide: []string{"AGENTS.md"}})
	if err != nil {
		t.Fatal(err)
	}
	return s, root
}

func TestSync(t *testing.T) {
	t.Run("in memory", func(t *testing.T) { testSync(t, false) })
	t.Run("reopened from its manifest", func(t *testing.T) { testSync(t, true) })
}

// testSync makes a sandbox, changes it and the real tree, and syncs; with
// reopen, the sync runs on the session read back from its manifest, as
// after a crash.
func testSync(t *testing.T, reopen bool) {
	s, root := fixture(t)
	if s.Workdir != filepath.Join(s.Tree, "sub") {
		t.Errorf("Workdir = %s", s.Workdir)
	}
	if _, err := os.Stat(filepath.Join(s.Tree, "AGENTS.md")); err == nil {
		t.Error("hidden AGENTS.md was copied")
	}
	if fi, _ := os.Stat(filepath.Join(s.Tree, "ro.txt")); fi.Mode().Perm()&0o222 != 0 {
		t.Errorf("read-only file copied with mode %v", fi.Mode())
	}
	if _, err := s.Materialize("AGENTS.md", "persona text"); err != nil {
		t.Fatal(err)
	}
	box := func(rel, content string) { must(t, os.WriteFile(filepath.Join(s.Tree, rel), []byte(content), 0o644)) }
	later := time.Now().Add(2 * time.Second)
	box("a.txt", "a by agent") // changed by the agent only
	box("b.txt", "b by agent") // changed on both sides
	box("new.txt", "new")      // created
	box("c.txt", "c")          // rewritten with the same bytes
	must(t, os.Chtimes(filepath.Join(s.Tree, "c.txt"), later, later))
	must(t, os.Remove(filepath.Join(s.Tree, "d.txt"))) // deleted
	must(t, os.Chmod(filepath.Join(s.Tree, "ro.txt"), 0o644))
	box("ro.txt", "ro by agent") // read-only: never synced
	must(t, os.WriteFile(filepath.Join(root, "b.txt"), []byte("b by user"), 0o644))
	if reopen {
		must(t, s.Save())
		var err error
		if s, err = Open(s.Dir); err != nil {
			t.Fatal(err)
		}
	}

	r, err := s.Sync(context.Background(), SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want []string
	}{
		{"updated", r.Updated, []string{"a.txt"}},
		{"created", r.Created, []string{"new.txt"}},
		{"unapplied deletions", r.Unapplied, []string{"d.txt"}},
		{"not synced", r.NotSynced, []string{"ro.txt"}},
		{"deleted", r.Deleted, []string{}},
	}
	for _, c := range checks {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if len(r.Conflicts) != 1 || r.Conflicts[0].Path != "b.txt" {
		t.Fatalf("conflicts = %+v", r.Conflicts)
	}
	read := func(p string) string { b, _ := os.ReadFile(p); return string(b) }
	if got := read(filepath.Join(root, "b.txt")); got != "b by user" {
		t.Errorf("the user's b.txt became %q", got)
	}
	if got := read(r.Conflicts[0].Saved); got != "b by agent" {
		t.Errorf("saved agent version = %q", got)
	}
	if !strings.HasPrefix(r.Conflicts[0].Saved, filepath.Join(s.Dir, ConflictsDir)) {
		t.Errorf("agent version saved outside the session: %s", r.Conflicts[0].Saved)
	}
	for rel, want := range map[string]string{"a.txt": "a by agent", "new.txt": "new", "d.txt": "d", "ro.txt": "ro", "AGENTS.md": "real agents"} {
		if got := read(filepath.Join(root, rel)); got != want {
			t.Errorf("real %s = %q, want %q", rel, got, want)
		}
	}

	// Deletions apply on request, unless the real file changed.
	r, err = s.Sync(context.Background(), SyncOptions{Deletes: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Deleted, []string{"d.txt"}) {
		t.Errorf("deleted = %v", r.Deleted)
	}
	if _, err := os.Stat(filepath.Join(root, "d.txt")); err == nil {
		t.Error("d.txt still exists")
	}
	must(t, s.Remove())
	if _, err := os.Stat(s.Dir); err == nil {
		t.Error("session directory left behind")
	}
}

func TestSyncInterrupted(t *testing.T) {
	s, _ := fixture(t)
	must(t, os.WriteFile(filepath.Join(s.Tree, "a.txt"), []byte("changed"), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := s.Sync(ctx, SyncOptions{})
	if err != nil || !r.Interrupted || r.Changes() != 0 {
		t.Errorf("Sync(cancelled) = %+v, %v; want interrupted with no changes", r, err)
	}
}

func TestCreateCancelledRemovesSession(t *testing.T) {
	root := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "a"), []byte("a"), 0o644))
	home := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := create(ctx, Options{Home: home, Persona: "p", Root: root, Cwd: root}); err == nil {
		t.Fatal("Create with a cancelled context succeeded")
	}
	entries, _ := os.ReadDir(filepath.Join(home, "sessions"))
	if len(entries) != 0 {
		t.Errorf("a cancelled Create left %d session directories", len(entries))
	}
	if _, err := create(context.Background(), Options{Home: home, Persona: "p", Root: root, Cwd: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "not inside the project root") {
		t.Errorf("cwd outside root: error = %v", err)
	}
}

// create is Create with, when o.Dir is empty, a new sandbox directory
// below o.Home/sessions, as a session would give it.
func create(ctx context.Context, o Options) (*Sandbox, error) {
	if o.Dir == "" {
		parent := filepath.Join(o.Home, "sessions")
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp(parent, o.Persona+"-")
		if err != nil {
			return nil, err
		}
		o.Dir = dir
	}
	return Create(ctx, o)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// FuzzPatternSet: the fast pattern set answers as go-git's gitignore
// matcher does.
func FuzzPatternSet(f *testing.F) {
	f.Add("node_modules\nbuild/\n*.log\n", "a/node_modules", true)
	f.Add("dist\n!dist/keep\n", "dist/keep", false)
	f.Add("/root-only\nsub/x\n", "root-only", false)
	f.Add("a[bc]\n\\#hash\n", "x/ab", false)
	f.Add("build/\n", "build", false)
	f.Fuzz(func(t *testing.T, patterns, path string, isDir bool) {
		lines := strings.Split(patterns, "\n")
		parts := strings.Split(path, "/")
		m := gitignore.NewMatcher(parsePatterns(lines))
		want := m.Match(parts, isDir)
		ps := newPatternSet(lines)
		if got := ps.Match(parts, isDir); got != want {
			t.Fatalf("patterns %q, path %q (dir %v): %v, go-git says %v", lines, path, isDir, got, want)
		}
		// With its parents, as the copy and the read-only rules ask.
		wantRel := want
		for i := 1; i < len(parts) && !wantRel; i++ {
			wantRel = m.Match(parts[:i], true)
		}
		if got := ps.MatchRel(path, isDir); got != wantRel && path != "" {
			t.Fatalf("patterns %q, path %q (dir %v) with parents: %v, go-git says %v", lines, path, isDir, got, wantRel)
		}
	})
}
