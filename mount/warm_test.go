package mount

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// describe lists every entry below root, as "path type mode size mtime
// content-or-target", with root's own path replaced by "<tree>", so that
// two trees can be compared file by file.
func describe(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s %v", rel, fi.Mode())
		// What making the sandbox writes itself (git's index, after
		// marking hidden files, and the shared object store) has the time
		// it was made; everything else has the project's times.
		made := rel == ".git" || rel == ".git/index" || rel == ".git/objects" || strings.HasPrefix(rel, ".git/objects/")
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			line += " -> " + strings.ReplaceAll(target, root, "<tree>")
		case fi.Mode().IsRegular():
			data, _ := os.ReadFile(path)
			data = bytes.ReplaceAll(data, []byte(root), []byte("<tree>"))
			line += fmt.Sprintf(" %d %q", fi.Size(), data)
			if !made {
				line += fmt.Sprint(" ", fi.ModTime().UnixNano())
			}
		case fi.IsDir() && rel != "." && !made:
			line += fmt.Sprintf(" %d", fi.ModTime().UnixNano())
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWarmSandboxIsFresh: a sandbox parked after a run and refreshed for
// the next is indistinguishable from a fresh copy, file by file (bytes,
// modes, times, links, directories, git), and so is its manifest.
func TestWarmSandboxIsFresh(t *testing.T) {
	t.Run("the sandbox stat'ed", func(t *testing.T) { testWarmSandboxIsFresh(t, false) })
	t.Run("the state the sync saw", func(t *testing.T) { testWarmSandboxIsFresh(t, true) })
}

func testWarmSandboxIsFresh(t *testing.T, remember bool) {
	root := t.TempDir()
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
		must(t, os.Chtimes(p, old, old))
	}
	for rel, content := range map[string]string{
		"a.txt": "a", "b.txt": "b", "c.txt": "c", "e.txt": "e", "f.sh": "#!/bin/sh\n", "sub/g.go": "package sub\n",
		"AGENTS.md": "real agents", "sub/AGENTS.md": "sub agents", ".agentignore": "build/\n*.log\n",
		"build/out.bin": "old build", "debug.log": "log", "ro.txt": "read-only", ".agentreadonly": "ro.txt\n",
	} {
		write(rel, content)
	}
	must(t, os.Symlink("a.txt", filepath.Join(root, "rel-link")))
	must(t, os.Symlink(filepath.Join(root, "sub"), filepath.Join(root, "abs-link")))
	hasGit := exec.Command("git", "--version").Run() == nil
	if hasGit {
		gitIn(t, root, "init", "-q")
		gitIn(t, root, "add", "-A")
		gitIn(t, root, "commit", "-q", "-m", "init")
	}
	home := t.TempDir()
	opts := func() Options {
		return Options{Home: home, Persona: "p", Root: root, Cwd: filepath.Join(root, "sub"), Hide: []string{"AGENTS.md"}}
	}

	// A first run: the agent works, sync-back, the sandbox is parked.
	s1, err := create(context.Background(), opts())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s1.Materialize("AGENTS.md", "persona"); err != nil {
		t.Fatal(err)
	}
	box := func(rel, content string) {
		p := filepath.Join(s1.Tree, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	box("a.txt", "a by the agent")
	box("new.txt", "new")
	box("build/out.bin", "agent's build")
	box("newdir/x.txt", "x")
	must(t, os.Remove(filepath.Join(s1.Tree, "b.txt")))
	if hasGit {
		gitIn(t, s1.Tree, "add", "new.txt")
		gitIn(t, s1.Tree, "commit", "-q", "-m", "agent")
	}
	if _, err := s1.Sync(context.Background(), SyncOptions{Remember: remember}); err != nil {
		t.Fatal(err)
	}
	warm := filepath.Join(home, "warm", "tree")
	must(t, s1.Park(warm))
	if _, err := os.Stat(stateFile(warm)); (err == nil) != remember {
		t.Fatalf("a warm state: %v, want one: %v", err, remember)
	}
	must(t, s1.Remove())

	// The user works meanwhile.
	write("c.txt", "c by the user")
	write("d.txt", "d")
	must(t, os.Remove(filepath.Join(root, "e.txt")))
	must(t, os.Chmod(filepath.Join(root, "f.sh"), 0o755))
	must(t, os.Remove(filepath.Join(root, "rel-link")))
	must(t, os.Symlink("c.txt", filepath.Join(root, "rel-link")))
	if hasGit {
		gitIn(t, root, "add", "-A")
		gitIn(t, root, "commit", "-q", "-m", "user")
	}

	o := opts()
	o.Warm = warm
	refreshed, err := create(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !refreshed.Reused {
		t.Fatal("the warm sandbox was not used")
	}
	fresh, err := create(context.Background(), opts())
	if err != nil {
		t.Fatal(err)
	}
	got, want := describe(t, refreshed.Tree), describe(t, fresh.Tree)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the refreshed sandbox differs from a fresh one:\n%s", diffLines(got, want))
	}
	if len(refreshed.realFiles()) != len(fresh.realFiles()) {
		t.Errorf("the manifests have %d and %d files", len(refreshed.realFiles()), len(fresh.realFiles()))
	}
	for rel, e := range fresh.realFiles() {
		r, ok := refreshed.realFiles()[rel]
		if !ok || r.size != e.size || r.mtime != e.mtime || r.mode != e.mode {
			t.Errorf("manifest[%s] = %+v, want %+v", rel, r, e)
		}
	}
	if !reflect.DeepEqual(refreshed.skipped, fresh.skipped) || !reflect.DeepEqual(refreshed.readonly, fresh.readonly) {
		t.Errorf("skipped %v and read-only %v, want %v and %v", refreshed.skipped, refreshed.readonly, fresh.skipped, fresh.readonly)
	}
	// Saved (from the copy's entries, not the map) and read back, both
	// manifests are the map they were made with.
	for _, s := range []*Sandbox{refreshed, fresh} {
		must(t, s.Save())
		back, err := Open(s.Dir)
		if err != nil {
			t.Fatalf("the saved manifest does not read back: %v", err)
		}
		if !reflect.DeepEqual(back.realFiles(), s.realFiles()) || !reflect.DeepEqual(back.readonly, s.readonly) {
			t.Errorf("the manifest read back differs: %d files, want %d", len(back.realFiles()), len(s.realFiles()))
		}
	}
}

// diffLines shows the lines only one of got and want has.
func diffLines(got, want []string) string {
	in := map[string]int{}
	for _, l := range got {
		in[l]++
	}
	for _, l := range want {
		in[l]--
	}
	var b strings.Builder
	for _, l := range got {
		if in[l] > 0 {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	for _, l := range want {
		if in[l] < 0 {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	return b.String()
}

// TestWarmStateRoundTrip: the state Park saves is the state the next
// refresh reads (a damaged one is ignored, not trusted).
func TestWarmStateRoundTrip(t *testing.T) {
	tree := filepath.Join(t.TempDir(), "tree")
	want := map[string]warmStat{
		"a.txt":         {mode: unix.S_IFREG | 0o644, size: 3, mtime: unix.Timespec{Sec: 5, Nsec: 6}},
		"d":             {mode: unix.S_IFDIR | 0o755},
		"d/b\nodd name": {mode: unix.S_IFREG | 0o600, size: 1 << 40},
		"d/e":           {mode: unix.S_IFDIR | 0o700},
		"l":             {mode: unix.S_IFLNK | 0o777},
	}
	var after []statEntry
	for rel, ws := range want {
		after = append(after, statEntry{rel: rel, st: ws})
	}
	must(t, saveWarmState(tree, listOf(after)))
	w := loadWarmState(tree)
	if w == nil {
		t.Fatal("the saved warm state does not load")
	}
	if _, err := os.Stat(stateFile(tree)); err == nil {
		t.Error("the warm state was not consumed")
	}
	dirs := map[string][]warmEntry{}
	for dir, want := range map[string]int{"": 3, "d": 2, "d/e": 0} {
		kids, ok := w.dir(dir)
		if !ok || len(kids) != want {
			t.Errorf("dir(%q) = %v, %v; want %d names", dir, kids, ok, want)
		}
		dirs[dir] = kids
	}
	for rel, want := range want {
		dir, name := path.Split(rel)
		if got, ok := lookupWarm(dirs[strings.TrimSuffix(dir, "/")], name); !ok || got != want {
			t.Errorf("entry %q = %+v, %v; want %+v", rel, got, ok, want)
		}
	}
	if _, ok := w.dir(".git"); ok {
		t.Error("entries of a directory the state does not list")
	}
	// A name listed twice: the directory is not trusted.
	twice := append(after, statEntry{rel: "d/e", st: warmStat{mode: unix.S_IFREG}})
	must(t, saveWarmState(tree, listOf(twice)))
	if w := loadWarmState(tree); w != nil {
		if _, ok := w.dir("d"); ok {
			t.Error("a directory listing a name twice was trusted")
		}
	}
	must(t, saveWarmState(tree, listOf(after)))
	data, _ := os.ReadFile(stateFile(tree))
	os.WriteFile(stateFile(tree), data[:len(data)-3], 0o600)
	if loadWarmState(tree) != nil {
		t.Error("a truncated warm state was trusted")
	}
	// Cut at an entry's end: the count tells.
	x := statEntry{rel: "x", st: warmStat{mode: unix.S_IFREG}}
	y := statEntry{rel: "y", st: warmStat{mode: unix.S_IFREG}}
	must(t, saveWarmState(tree, listOf([]statEntry{x})))
	single, _ := os.ReadFile(stateFile(tree))
	must(t, saveWarmState(tree, listOf([]statEntry{x, y})))
	double, _ := os.ReadFile(stateFile(tree))
	os.WriteFile(stateFile(tree), double[:len(single)], 0o600)
	if loadWarmState(tree) != nil {
		t.Error("a warm state cut at an entry's end was trusted")
	}
}

// FuzzWarmState: the warm state reader never panics, and what it accepts
// stays inside the sandbox.
func FuzzWarmState(f *testing.F) {
	f.Add([]byte(warmStateMagic + "\x01\x01a\x80\x80\x02\x02\x02\x02"))
	f.Add([]byte(warmStateMagic))
	f.Add([]byte("not a state"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := readWarmState(data)
		if err != nil {
			return
		}
		n := 0
		for dir, entries := range w.dirs {
			for _, e := range entries {
				if rel := path.Join(dir, e.name); !safeRel(rel) || rel == "." || strings.Contains(e.name, "/") {
					t.Fatalf("accepted %q in %q", e.name, dir)
				}
			}
			n += len(entries)
			w.dir(dir)
		}
		if n != w.count {
			t.Fatalf("%d entries, counted %d", n, w.count)
		}
	})
}

// TestWarmRefreshFollowsNoLink: a directory of the parked tree that became
// a link (a process the harness left behind can do that after sync-back
// saw the tree) is neither followed nor trusted by the refresh: what it
// leads to stays as it was, and the refreshed sandbox is a fresh copy.
func TestWarmRefreshFollowsNoLink(t *testing.T) {
	for _, remember := range []bool{false, true} {
		t.Run(fmt.Sprint("remember=", remember), func(t *testing.T) {
			root := t.TempDir()
			must(t, os.MkdirAll(filepath.Join(root, "sub", "deep"), 0o755))
			must(t, os.WriteFile(filepath.Join(root, "sub", "g.go"), []byte("package sub\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(root, "sub", "deep", "h.txt"), []byte("h\n"), 0o644))
			must(t, os.Chmod(filepath.Join(root, "sub"), 0o750))
			home := t.TempDir()
			opts := Options{Home: home, Persona: "p", Root: root, Cwd: root}
			s1, err := create(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s1.Sync(context.Background(), SyncOptions{Remember: remember}); err != nil {
				t.Fatal(err)
			}
			warm := filepath.Join(home, "warm", "tree")
			must(t, s1.Park(warm))
			must(t, s1.Remove())

			// Behind the state's back: sub becomes a link to a directory
			// outside, with the same names in it and one more.
			victim := t.TempDir()
			must(t, os.MkdirAll(filepath.Join(victim, "deep"), 0o755))
			must(t, os.WriteFile(filepath.Join(victim, "g.go"), []byte("victim\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(victim, "deep", "h.txt"), []byte("victim h\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(victim, "other.txt"), []byte("other\n"), 0o644))
			must(t, os.Chmod(victim, 0o755))
			before := describe(t, victim)
			must(t, os.RemoveAll(filepath.Join(warm, "sub")))
			must(t, os.Symlink(victim, filepath.Join(warm, "sub")))

			o := opts
			o.Warm = warm
			refreshed, err := create(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if after := describe(t, victim); !reflect.DeepEqual(after, before) {
				t.Errorf("the refresh changed what the link led to:\n%s", diffLines(after, before))
			}
			if fi, _ := os.Stat(victim); fi.Mode().Perm() != 0o755 {
				t.Errorf("the refresh changed the mode of what the link led to: %v", fi.Mode())
			}
			fresh, err := create(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := describe(t, refreshed.Tree), describe(t, fresh.Tree); !reflect.DeepEqual(got, want) {
				t.Errorf("the refreshed sandbox differs from a fresh one:\n%s", diffLines(got, want))
			}
		})
	}
}

// listOf yields the entries es.
func listOf(es []statEntry) iter.Seq[*statEntry] {
	var l entryList
	l.add(es)
	return l.all()
}
