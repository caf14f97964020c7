//go:build linux

package mount

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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
	return overlayFixtureWith(t, nil)
}

// overlayFixtureWith is overlayFixture, pre changing the real tree before
// the sandbox is made (and the file system's clock moved on).
func overlayFixtureWith(t *testing.T, pre func(root string)) (*Sandbox, string) {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a.txt": "a", "b.txt": "b", "sub/c.txt": "c", "sub/deep/d.txt": "d", "gone/x.txt": "x", "gone/in/y.txt": "y",
		".agentignore": ".env\n", ".env": "SECRET=1", "sub/.env": "SECRET=2", "node_modules/m/index.js": "m",
		"AGENTS.md": "real agents", "sub/AGENTS.md": "real sub agents", ".agentreadonly": "ro.txt\n", "ro.txt": "ro",
		".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n", ".git/info/exclude": "# user's\n",
		".claude/settings.json": "{}",
	})
	if pre != nil {
		pre(root)
		time.Sleep(20 * time.Millisecond) // past the file system's coarse clock
	}
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
	ro := filepath.Join(ov.Upper, "ro.txt")
	if fi, err := os.Stat(ro); err != nil || fi.Mode().Perm() != 0o444 {
		t.Errorf("upper ro.txt: %v (%v), want a read-only copy", fi, err)
	} else if data, _ := os.ReadFile(ro); string(data) != "ro" {
		t.Errorf("upper ro.txt = %q", data)
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

// canWhiteout reports whether this process can make a whiteout (a
// character device 0:0), and why not.
func canWhiteout(t *testing.T) (bool, string) {
	p := filepath.Join(t.TempDir(), "w")
	if err := unix.Mknod(p, unix.S_IFCHR, 0); err != nil {
		return false, "cannot make a whiteout (mknod of a character device 0:0): " + err.Error()
	}
	return true, ""
}

// upperLayer makes the agent's changes by hand in the upper layer of s.
type upperLayer struct {
	t *testing.T
	s *Sandbox
}

func (u upperLayer) path(rel string) string {
	return filepath.Join(u.s.Overlay.Upper, filepath.FromSlash(rel))
}

// write writes rel with content and mode, its directories made in the
// upper layer (as overlayfs copies them up).
func (u upperLayer) write(rel, content string, mode os.FileMode) {
	must(u.t, os.MkdirAll(filepath.Dir(u.path(rel)), 0o755))
	_ = os.Remove(u.path(rel)) // a read-only copy: the agent would chmod it
	must(u.t, os.WriteFile(u.path(rel), []byte(content), mode))
	must(u.t, os.Chmod(u.path(rel), mode))
}

// whiteout deletes rel as overlayfs does.
func (u upperLayer) whiteout(rel string) {
	must(u.t, os.MkdirAll(filepath.Dir(u.path(rel)), 0o755))
	must(u.t, unix.Mknod(u.path(rel), unix.S_IFCHR, 0))
}

// opaque makes rel a directory that replaced the real one.
func (u upperLayer) opaque(rel string) {
	must(u.t, os.MkdirAll(u.path(rel), 0o755))
	must(u.t, unix.Lsetxattr(u.path(rel), opaqueXattr, []byte("y"), 0))
}

// summary is a Report as a line per list that is not empty.
func summary(r *Report) string {
	var b strings.Builder
	line := func(name string, l []string) {
		if len(l) > 0 {
			l = slices.Clone(l)
			sort.Strings(l)
			fmt.Fprintf(&b, "%s: %s\n", name, strings.Join(l, " "))
		}
	}
	var conflicts []string
	for _, c := range r.Conflicts {
		conflicts = append(conflicts, c.Path)
	}
	var failed []string
	for _, f := range r.Failed {
		failed = append(failed, f.Path+" ("+f.Error+")")
	}
	line("created", r.Created)
	line("updated", r.Updated)
	line("deleted", r.Deleted)
	line("unapplied", r.Unapplied)
	line("conflicts", conflicts)
	line("notSynced", r.NotSynced)
	line("held", r.Held)
	line("refused", r.Refused)
	line("blocked", r.Blocked)
	line("failed", failed)
	return b.String()
}

// TestOverlaySync: sync-back of an overlay sandbox reads the upper layer,
// made by hand here as overlayfs makes it, and does to the real tree what
// a copy's does.
func TestOverlaySync(t *testing.T) {
	whiteouts, why := canWhiteout(t)
	tests := []struct {
		name     string
		whiteout bool              // the row makes whiteouts
		pre      func(root string) // the real tree before the sandbox
		agent    func(u upperLayer)
		user     func(root string) // the real tree while the agent works
		deletes  bool
		want     string
		real     map[string]string // real files after ("" for none)
	}{
		{name: "created", agent: func(u upperLayer) { u.write("new.txt", "n", 0o644); u.write("sub/deep/new.txt", "n2", 0o644) },
			want: "created: new.txt sub/deep/new.txt\n", real: map[string]string{"new.txt": "n", "sub/deep/new.txt": "n2"}},
		{name: "updated", agent: func(u upperLayer) { u.write("a.txt", "A", 0o644) },
			want: "updated: a.txt\n", real: map[string]string{"a.txt": "A"}},
		{name: "copied up unchanged", agent: func(u upperLayer) {
			u.write("a.txt", "a", 0o644)
			fi, err := os.Stat(filepath.Join(u.s.Root, "a.txt"))
			must(u.t, err)
			must(u.t, os.Chtimes(u.path("a.txt"), fi.ModTime(), fi.ModTime()))
		}, want: "", real: map[string]string{"a.txt": "a"}},
		{name: "mode change", agent: func(u upperLayer) { u.write("b.txt", "b", 0o755) },
			want: "updated: b.txt\n", real: map[string]string{"b.txt": "b"}},
		{name: "symlink", agent: func(u upperLayer) { must(u.t, os.Symlink("a.txt", u.path("link"))) },
			want: "notSynced: link\n", real: map[string]string{"link": "", "a.txt": "a"}},
		{name: "deleted, without deletes", whiteout: true, agent: func(u upperLayer) { u.whiteout("a.txt") },
			want: "unapplied: a.txt\n", real: map[string]string{"a.txt": "a"}},
		{name: "deleted", whiteout: true, deletes: true, agent: func(u upperLayer) { u.whiteout("a.txt") },
			want: "deleted: a.txt\n", real: map[string]string{"a.txt": ""}},
		{name: "deleted by the xattr whiteout", deletes: true, agent: func(u upperLayer) {
			u.write("a.txt", "", 0o644)
			must(u.t, unix.Lsetxattr(u.path("a.txt"), whiteoutXattr, []byte("y"), 0))
		}, want: "deleted: a.txt\n", real: map[string]string{"a.txt": ""}},
		{name: "a directory deleted", whiteout: true, deletes: true, agent: func(u upperLayer) { u.whiteout("gone") },
			want: "deleted: gone/in/y.txt gone/x.txt\n", real: map[string]string{"gone/x.txt": "", "gone/in/y.txt": "", "gone": ""}},
		{name: "an opaque directory", deletes: true, agent: func(u upperLayer) { u.opaque("gone"); u.write("gone/new.txt", "n", 0o644) },
			want: "created: gone/new.txt\ndeleted: gone/in/y.txt gone/x.txt\n", real: map[string]string{"gone/x.txt": "", "gone/in": "", "gone/new.txt": "n"}},
		{name: "a directory renamed (copied and deleted)", whiteout: true, deletes: true, agent: func(u upperLayer) {
			u.write("moved/x.txt", "x", 0o644)
			u.write("moved/in/y.txt", "y", 0o644)
			u.whiteout("gone")
		}, want: "created: moved/in/y.txt moved/x.txt\ndeleted: gone/in/y.txt gone/x.txt\n",
			real: map[string]string{"gone": "", "moved/x.txt": "x", "moved/in/y.txt": "y"}},
		{name: "a file replaced by a directory", deletes: true, agent: func(u upperLayer) {
			must(u.t, os.Mkdir(u.path("a.txt"), 0o755))
			u.write("a.txt/in.txt", "i", 0o644)
		}, want: "created: a.txt/in.txt\ndeleted: a.txt\n", real: map[string]string{"a.txt/in.txt": "i"}},
		{name: "a file replaced by a directory, without deletes", agent: func(u upperLayer) {
			must(u.t, os.Mkdir(u.path("a.txt"), 0o755))
			u.write("a.txt/in.txt", "i", 0o644)
		}, want: "unapplied: a.txt\nblocked: a.txt/in.txt\n", real: map[string]string{"a.txt": "a"}},
		{name: "a directory replaced by a file", deletes: true, agent: func(u upperLayer) { u.write("gone", "g", 0o644) },
			want: "created: gone\ndeleted: gone/in/y.txt gone/x.txt\n", real: map[string]string{"gone": "g"}},
		{name: "a file replaced by a link", deletes: true, agent: func(u upperLayer) { must(u.t, os.Symlink("b.txt", u.path("a.txt"))) },
			want: "deleted: a.txt\nnotSynced: a.txt\n", real: map[string]string{"a.txt": ""}},
		{name: "the sandbox's whiteouts", whiteout: true, deletes: true, agent: func(u upperLayer) {
			u.whiteout(".env")
			u.whiteout("sub/AGENTS.md")
			u.whiteout("node_modules")
		}, want: "", real: map[string]string{".env": "SECRET=1", "sub/AGENTS.md": "real sub agents", "node_modules/m/index.js": "m"}},
		{name: "an ignored directory made again", deletes: true, agent: func(u upperLayer) {
			u.opaque("node_modules")
			u.write("node_modules/n/index.js", "n", 0o644)
		}, want: "", real: map[string]string{"node_modules/m/index.js": "m", "node_modules/n/index.js": ""}},
		{name: "a materialized file", agent: func(u upperLayer) {
			_, err := u.s.Materialize("AGENTS.md", "persona")
			must(u.t, err)
		}, want: "", real: map[string]string{"sub/AGENTS.md": "real sub agents"}},
		{name: "a read-only file", whiteout: true, deletes: true, agent: func(u upperLayer) { u.write("ro.txt", "RO", 0o644); u.whiteout("b.txt") },
			want: "deleted: b.txt\nnotSynced: ro.txt\n", real: map[string]string{"ro.txt": "ro", "b.txt": ""}},
		{name: "held configuration", agent: func(u upperLayer) { u.write(".claude/settings.json", `{"hooks":1}`, 0o644) },
			want: "held: .claude/settings.json\n", real: map[string]string{".claude/settings.json": "{}"}},
		{name: "a policy file", agent: func(u upperLayer) { u.write(".agentignore", "", 0o644) },
			want: "refused: .agentignore\n", real: map[string]string{".agentignore": ".env\n"}},
		{name: "git's own", agent: func(u upperLayer) {
			u.write(".git/HEAD", "ref: refs/heads/agent\n", 0o644)
			u.write(".git/index", "x", 0o644)
		}, want: "", real: map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/index": ""}},
		{name: "names taken for .git", agent: func(u upperLayer) {
			u.write(".GIT/hooks/pre-commit", "#!/bin/sh", 0o755)
			u.write("GIT~1/hooks/x", "#!/bin/sh", 0o755)
			u.write("sub/.gIt/HEAD", "ref: refs/heads/evil\n", 0o644)
			must(u.t, os.Symlink("a.txt", u.path(".GIT/link")))
		}, want: "notSynced: .GIT/hooks/pre-commit .GIT/link GIT~1/hooks/x sub/.gIt/HEAD\n",
			real: map[string]string{".GIT/hooks/pre-commit": "", "GIT~1/hooks/x": "", "sub/.gIt/HEAD": ""}},
		{name: "a conflict: the real file changed after the start", agent: func(u upperLayer) { u.write("a.txt", "A", 0o644) },
			user: func(root string) { must(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("user"), 0o644)) },
			want: "conflicts: a.txt\n", real: map[string]string{"a.txt": "user"}},
		{name: "a deletion's conflict", whiteout: true, deletes: true, agent: func(u upperLayer) { u.whiteout("a.txt") },
			user: func(root string) { must(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("user"), 0o644)) },
			want: "conflicts: a.txt\n", real: map[string]string{"a.txt": "user"}},
		{name: "a conflict: the real file deleted after the agent changed it", agent: func(u upperLayer) {
			u.write("a.txt", "A", 0o644)
			must(u.t, unix.Lsetxattr(u.path("a.txt"), originXattr, []byte("x"), 0)) // copied up
			u.write("new.txt", "n", 0o644)
		}, user: func(root string) {
			must(t, os.Remove(filepath.Join(root, "a.txt")))
		}, want: "created: new.txt\nconflicts: a.txt\n", real: map[string]string{"a.txt": "", "new.txt": "n"}},
		{name: "changed before the start: synced", agent: func(u upperLayer) { u.write("a.txt", "A", 0o644) },
			pre:  func(root string) { must(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("user"), 0o644)) },
			want: "updated: a.txt\n", real: map[string]string{"a.txt": "A"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.whiteout && !whiteouts {
				t.Skip(why)
			}
			s, root := overlayFixtureWith(t, tt.pre)
			tt.agent(upperLayer{t, s})
			if tt.user != nil {
				time.Sleep(20 * time.Millisecond) // past the file system's coarse clock
				tt.user(root)
			}
			r, err := s.Sync(context.Background(), SyncOptions{Deletes: tt.deletes})
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(r); got != tt.want {
				t.Errorf("report:\n%s\nwant:\n%s", got, tt.want)
			}
			for rel, want := range tt.real {
				data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
				switch {
				case want == "" && err == nil:
					t.Errorf("%s is in the real tree", rel)
				case want != "" && string(data) != want:
					t.Errorf("real %s = %q (%v), want %q", rel, data, err, want)
				}
			}
			for _, c := range r.Conflicts {
				if data, err := os.ReadFile(c.Saved); c.Saved != "" && (err != nil || string(data) != "A") {
					t.Errorf("the agent's %s saved as %q (%v)", c.Path, data, err)
				}
			}
			if tt.name == "mode change" {
				if fi, err := os.Stat(filepath.Join(root, "b.txt")); err != nil || fi.Mode().Perm() != 0o755 {
					t.Errorf("real b.txt mode %v (%v)", fi.Mode(), err)
				}
			}
		})
	}
}

// TestOverlaySyncAgain: a dry run writes nothing; what a sync applied is
// the base of the next, in the same process and after Open: nothing
// syncs twice, the user's later edit is the user's, and the agent's next
// change of it is a conflict.
func TestOverlaySyncAgain(t *testing.T) {
	whiteouts, _ := canWhiteout(t)
	s, root := overlayFixture(t)
	u := upperLayer{t, s}
	u.write("a.txt", "A", 0o644)
	u.write("new.txt", "n", 0o644)
	want := "created: new.txt\nupdated: a.txt\n"
	if whiteouts {
		u.whiteout("b.txt")
		want += "deleted: b.txt\n"
	}
	r, err := s.Sync(context.Background(), SyncOptions{Deletes: true, DryRun: true})
	must(t, err)
	if got := summary(r); got != want {
		t.Errorf("dry run:\n%s\nwant:\n%s", got, want)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(data) != "a" {
		t.Errorf("the dry run wrote a.txt: %q", data)
	}
	r, err = s.Sync(context.Background(), SyncOptions{Deletes: true})
	must(t, err)
	if got := summary(r); got != want {
		t.Errorf("sync:\n%s\nwant:\n%s", got, want)
	}
	r, err = s.Sync(context.Background(), SyncOptions{Deletes: true})
	must(t, err)
	if got := summary(r); got != "" {
		t.Errorf("second sync:\n%s", got)
	}
	must(t, s.SaveApplied())
	o, err := Open(s.Dir)
	must(t, err)
	time.Sleep(20 * time.Millisecond)
	write(t, filepath.Join(root, "a.txt"), "user")
	r, err = o.Sync(context.Background(), SyncOptions{Deletes: true})
	must(t, err)
	if got := summary(r); got != "" {
		t.Errorf("sync after Open and the user's edit:\n%s", got)
	}
	u.write("a.txt", "A2", 0o644)
	u.write("new.txt", "n2", 0o644)
	r, err = o.Sync(context.Background(), SyncOptions{Deletes: true})
	must(t, err)
	if got, want := summary(r), "updated: new.txt\nconflicts: a.txt\n"; got != want {
		t.Errorf("the agent's next changes:\n%s\nwant:\n%s", got, want)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(data) != "user" {
		t.Errorf("real a.txt = %q, want the user's", data)
	}
}

// TestMergedPath: the overlay's lookup in Go: the upper layer's entry
// over the real one, nothing under a whiteout (made or the sandbox's
// own) nor the real entries of an opaque directory.
func TestMergedPath(t *testing.T) {
	whiteouts, why := canWhiteout(t)
	s, root := overlayFixture(t)
	u := upperLayer{t, s}
	u.write("a.txt", "A", 0o644)
	u.opaque("gone")
	u.write("gone/new.txt", "n", 0o644)
	if whiteouts {
		u.whiteout("b.txt")
		u.whiteout("sub/deep")
	}
	tests := []struct {
		rel, want string // want: "upper", "real" or "" for none
		whiteout  bool
	}{
		{"a.txt", "upper", false},
		{"sub/c.txt", "real", false},
		{".claude", "real", false},
		{"missing.txt", "", false},
		{".env", "", false},
		{"node_modules/m/index.js", "", false},
		{"gone/new.txt", "upper", false},
		{"gone/x.txt", "", false},
		{"gone/in/y.txt", "", false},
		{"b.txt", "", true},
		{"sub/deep/d.txt", "", true},
	}
	for _, tt := range tests {
		if tt.whiteout && !whiteouts {
			t.Logf("%s: skipped: %s", tt.rel, why)
			continue
		}
		p, ok := s.MergedPath(tt.rel)
		want := map[string]string{"upper": filepath.Join(s.Overlay.Upper, tt.rel), "real": filepath.Join(root, tt.rel), "": ""}[tt.want]
		if p != want || ok != (tt.want != "") {
			t.Errorf("MergedPath(%s) = %s, %v; want %s", tt.rel, p, ok, want)
		}
	}
}

// TestOverlayLinks: a link of the project that leads to the project by its
// real path is made again in the upper layer, leading to the tree, as a
// copy makes it, and is no change of the agent's; one that stays inside
// by a relative path is left to the lower layer.
func TestOverlayLinks(t *testing.T) {
	s, root := overlayFixtureWith(t, func(root string) {
		must(t, os.Symlink(filepath.Join(root, "a.txt"), filepath.Join(root, "sub", "abs")))
		must(t, os.Symlink("../a.txt", filepath.Join(root, "sub", "rel")))
	})
	if got, err := os.Readlink(filepath.Join(s.Overlay.Upper, "sub", "abs")); err != nil || got != filepath.Join(s.Tree, "a.txt") {
		t.Errorf("upper sub/abs -> %q (%v), want the tree's a.txt", got, err)
	}
	if _, err := os.Lstat(filepath.Join(s.Overlay.Upper, "sub", "rel")); err == nil {
		t.Error("sub/rel was made again")
	}
	r, err := s.Sync(context.Background(), SyncOptions{Deletes: true})
	must(t, err)
	if got := summary(r); got != "" {
		t.Errorf("report:\n%s", got)
	}
	if got, _ := os.Readlink(filepath.Join(root, "sub", "abs")); got != filepath.Join(root, "a.txt") {
		t.Errorf("real sub/abs -> %q", got)
	}
	must(t, s.Save())
	o, err := Open(s.Dir)
	must(t, err)
	r, err = o.Sync(context.Background(), SyncOptions{Deletes: true})
	must(t, err)
	if got := summary(r); got != "" {
		t.Errorf("report after Open:\n%s", got)
	}
}

// TestOverlayUpperDirs: the directories Materialize makes in the upper
// layer look as the real ones: their mode, whatever the umask.
func TestOverlayUpperDirs(t *testing.T) {
	s, _ := overlayFixtureWith(t, func(root string) {
		must(t, os.Chmod(filepath.Join(root, "sub", "deep"), 0o775))
	})
	_, err := s.MaterializeDir(Dir{Rel: "sub/deep/skill", Files: []DirFile{{Path: "SKILL.md", Data: []byte("x")}}})
	must(t, err)
	fi, err := os.Stat(filepath.Join(s.Overlay.Upper, "sub", "deep"))
	must(t, err)
	if fi.Mode().Perm() != 0o775 {
		t.Errorf("upper sub/deep: %v, want the real one's 0775", fi.Mode())
	}
}

// TestOverlayCreateFails: a sandbox directory that holds an upper layer
// already is refused, and that layer is not removed; a failure after
// Create made the layers removes them.
func TestOverlayCreateFails(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "a"})
	dir := filepath.Join(t.TempDir(), "s")
	writeTree(t, dir, map[string]string{"upper/keep.txt": "k"})
	if _, err := Create(context.Background(), Options{Root: root, Cwd: root, Dir: dir, Overlay: true}); err == nil {
		t.Fatal("Create over an upper layer: no error")
	}
	if _, err := os.Stat(filepath.Join(dir, UpperDir, "keep.txt")); err != nil {
		t.Errorf("the upper layer found there was removed: %v", err)
	}
	dir2 := filepath.Join(t.TempDir(), "s2")
	writeTree(t, dir2, map[string]string{"work": "a file in the place of the work directory"})
	if _, err := Create(context.Background(), Options{Root: root, Cwd: root, Dir: dir2, Overlay: true}); err == nil {
		t.Fatal("Create with a file in the place of work: no error")
	}
	if _, err := os.Lstat(filepath.Join(dir2, UpperDir)); !os.IsNotExist(err) {
		t.Errorf("the upper layer Create made is left: %v", err)
	}
}

// TestOverlayNestedGitFiles: a nested .git file gets its place in the
// upper layer, as in a copy (sealGitFiles): a git directory of its own
// over one naming a git directory outside the project, its objects shared
// by alternates; the relative path for one naming a directory inside the
// project by an absolute path (that directory git's own, never synced);
// a whiteout for one that names none.
func TestOverlayNestedGitFiles(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{
		"HEAD": "ref: refs/heads/main\n", "config": "[core]\n", "refs/heads/main": "0123456789abcdef0123456789abcdef01234567\n",
	})
	must(t, os.MkdirAll(filepath.Join(outside, "objects"), 0o755))
	s, root := overlayFixtureWith(t, func(root string) {
		writeTree(t, root, map[string]string{
			"out/.git": "gitdir: " + outside + "\n", "out/b.txt": "b",
			"gitdata/HEAD": "ref: refs/heads/main\n", "in/.git": "gitdir: " + filepath.Join(root, "gitdata") + "\n",
			"rel/.git":    "gitdir: ../gitdata\n",
			"broken/.git": "not a gitdir file\n",
		})
	})
	up := s.Overlay.Upper
	if data, err := os.ReadFile(filepath.Join(up, "out/.git/HEAD")); err != nil || string(data) != "ref: refs/heads/main\n" {
		t.Errorf("upper out/.git/HEAD = %q (%v), want the real HEAD", data, err)
	}
	if data, err := os.ReadFile(filepath.Join(up, "out/.git/objects/info/alternates")); err != nil || !strings.Contains(string(data), filepath.Join(outside, "objects")) {
		t.Errorf("upper out/.git/objects/info/alternates = %q (%v), want the real objects", data, err)
	}
	if data, err := os.ReadFile(filepath.Join(up, "in/.git")); err != nil || string(data) != "gitdir: ../gitdata\n" {
		t.Errorf("upper in/.git = %q (%v), want gitdir: ../gitdata", data, err)
	}
	if _, err := os.Lstat(filepath.Join(up, "rel/.git")); err == nil {
		t.Errorf("upper rel/.git exists; a relative gitdir inside the project is shown as it is")
	}
	if !s.inGit("gitdata/HEAD") {
		t.Errorf("gitdata/HEAD, the git directory in/.git names, is not git's own: it would sync back")
	}
	if !slices.Contains(s.Overlay.Whiteouts, "broken/.git") {
		t.Errorf("whiteouts %q lack broken/.git", s.Overlay.Whiteouts)
	}
	if data, err := os.ReadFile(filepath.Join(root, "out/.git")); err != nil || !strings.HasPrefix(string(data), "gitdir: ") {
		t.Errorf("real out/.git = %q (%v), want it untouched", data, err)
	}
}
