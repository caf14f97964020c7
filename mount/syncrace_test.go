package mount

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// raceAt has fn run once, as a writer that races the check of the file
// rel with its replacement (beforeReplace), and returns whether it ran.
func raceAt(t *testing.T, rel string, fn func()) func() bool {
	t.Helper()
	ran := false
	beforeReplace = func(r string) {
		if r == rel && !ran {
			ran = true
			fn()
		}
	}
	t.Cleanup(func() { beforeReplace = nil })
	return func() bool { return ran }
}

// noExchange stands for a file system that cannot exchange two files.
func noExchange(t *testing.T) {
	t.Helper()
	exchange = func(int, string, string) error { return unix.EINVAL }
	t.Cleanup(func() { exchange = exchangeAt })
}

// namedTemps has the test write files under temporary names, as where the
// file system has no unnamed files.
func namedTemps(t *testing.T) {
	t.Helper()
	anonTemps = false
	t.Cleanup(func() { anonTemps = true })
}

// raceTree makes a real tree of files (slash paths to contents), each
// modified an hour ago (so that a write now changes its time), and a
// session of it.
func raceTree(t *testing.T, files map[string]string) (*Sandbox, string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	past := time.Now().Add(-time.Hour)
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		write(t, p, content)
		must(t, os.Chtimes(p, past, past))
	}
	s, err := create(context.Background(), Options{Home: filepath.Join(base, "home"), Persona: "p", Root: root, Cwd: root})
	must(t, err)
	return s, root
}

// TestSyncRace: a user's write to a real file between sync-back's check of
// it and its replacement by the agent's version (or the user's creation
// of a file the agent created) is never lost: the user's bytes stay, the
// file is reported as a conflict, and the agent's version is saved under
// conflicts/; the other files sync, and no temporary file is left.
func TestSyncRace(t *testing.T) {
	const agent = "the agent's version\n"
	// Each user write leaves the file as the user wants it; user is that
	// content.
	inPlace := func(p string) { must(t, os.WriteFile(p, []byte("the user's version, longer\n"), 0o644)) }
	// An editor's save: a new file renamed over the old one, of the same
	// size, mode and modification time: only the inode tells.
	renamedOver := func(p string) {
		var st unix.Stat_t
		must(t, unix.Lstat(p, &st))
		tmp := p + ".swp"
		must(t, os.WriteFile(tmp, []byte("USR!\n"), 0o644))
		mtime := time.Unix(st.Mtim.Unix())
		must(t, os.Chtimes(tmp, mtime, mtime))
		must(t, os.Rename(tmp, p))
	}
	created := func(p string) { must(t, os.WriteFile(p, []byte("made by the user\n"), 0o644)) }
	tests := []struct {
		name      string
		rel       string
		user      func(string)
		want      string // the real file after the sync
		named     bool   // temporary files with names
		noExch    bool   // the file system cannot exchange
		modeOnly  bool   // the agent changes the mode of a hard-linked file only
		agentMode os.FileMode
	}{
		{name: "written in place", rel: "a.txt", user: inPlace, want: "the user's version, longer\n"},
		{name: "written in place, named temporary file", rel: "a.txt", user: inPlace, want: "the user's version, longer\n", named: true},
		{name: "replaced by a rename, the same size and time", rel: "a.txt", user: renamedOver, want: "USR!\n"},
		{name: "created by the user too", rel: "sub/new.txt", user: created, want: "made by the user\n"},
		{name: "created by the user too, named temporary file", rel: "sub/new.txt", user: created, want: "made by the user\n", named: true},
		{name: "written in place, no exchange", rel: "a.txt", user: inPlace, want: "the user's version, longer\n", noExch: true},
		{name: "mode change of a hard-linked file", rel: "a.txt", user: inPlace, want: "the user's version, longer\n", modeOnly: true, agentMode: 0o755},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, root := raceTree(t, map[string]string{"a.txt": "USER\n", "b.txt": "b\n", "sub/c.txt": "c\n"})
			if tc.named {
				namedTemps(t)
			}
			if tc.noExch {
				noExchange(t)
			}
			agentWrote := agent
			if tc.modeOnly {
				agentWrote = "USER\n"
				must(t, os.Link(filepath.Join(root, "a.txt"), filepath.Join(root, "a-link.txt")))
				must(t, os.Chmod(filepath.Join(s.Tree, tc.rel), tc.agentMode))
			} else {
				write(t, filepath.Join(s.Tree, tc.rel), agent)
			}
			write(t, filepath.Join(s.Tree, "b.txt"), "b by the agent\n")
			raced := raceAt(t, tc.rel, func() { tc.user(filepath.Join(root, tc.rel)) })

			r, err := s.Sync(context.Background(), SyncOptions{})
			must(t, err)
			if !raced() {
				t.Fatal("the user never wrote between the check and the replacement")
			}
			if got, _ := os.ReadFile(filepath.Join(root, tc.rel)); string(got) != tc.want {
				t.Errorf("real %s = %q, want the user's %q", tc.rel, got, tc.want)
			}
			if len(r.Conflicts) != 1 || r.Conflicts[0].Path != tc.rel {
				t.Fatalf("conflicts = %+v, want %s", r.Conflicts, tc.rel)
			}
			saved, err := os.ReadFile(r.Conflicts[0].Saved)
			if err != nil || string(saved) != agentWrote {
				t.Errorf("the agent's version saved = %q (%v), want %q", saved, err, agentWrote)
			}
			if slices.Contains(r.Updated, tc.rel) || slices.Contains(r.Created, tc.rel) {
				t.Errorf("report: %+v: %s reported written", r, tc.rel)
			}
			if !slices.Equal(r.Updated, []string{"b.txt"}) {
				t.Errorf("updated = %v, want [b.txt]", r.Updated)
			}
			if got, _ := os.ReadFile(filepath.Join(root, "b.txt")); string(got) != "b by the agent\n" {
				t.Errorf("real b.txt = %q: the other file did not sync", got)
			}
			if left := tempFiles(t, root); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

// TestSyncNoRace: without a concurrent writer, the checked replacement
// writes the agent's file and keeps nothing of the one it replaced, with
// or without the exchange.
func TestSyncNoRace(t *testing.T) {
	for _, noExch := range []bool{false, true} {
		s, root := raceTree(t, map[string]string{"a.txt": "a\n"})
		if noExch {
			noExchange(t)
		}
		write(t, filepath.Join(s.Tree, "a.txt"), "a by the agent\n")
		r, err := s.Sync(context.Background(), SyncOptions{})
		must(t, err)
		if !slices.Equal(r.Updated, []string{"a.txt"}) || len(r.Conflicts) != 0 {
			t.Errorf("no exchange %v: report %+v", noExch, r)
		}
		if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "a by the agent\n" {
			t.Errorf("no exchange %v: real a.txt = %q", noExch, got)
		}
		if left := tempFiles(t, root); len(left) > 0 {
			t.Errorf("no exchange %v: temporary files left: %v", noExch, left)
		}
	}
}

// TestSyncDeleteRace: a user's write to a real file between sync-back's
// check of it and the removal the agent's deletion applies is never lost:
// the file stays as the user left it, it is a conflict and not reported
// deleted; a file the user made at the name while the old one was being
// removed stays, and the one it replaced is saved under conflicts/; a link
// replaced after the check stays. The other deletion applies, and no
// temporary file is left.
func TestSyncDeleteRace(t *testing.T) {
	tests := []struct {
		name    string
		rel     string
		link    bool
		user    func(t *testing.T, p string)
		aside   func(t *testing.T, p string) // a writer after the rename aside
		want    string                       // the real file after the sync (the target, for a link)
		saved   string                       // the version saved, "" for none
		noAside bool                         // the file system cannot rename aside
	}{
		{name: "written in place", rel: "a.txt", want: "USER\nmore by the user\n",
			user: func(t *testing.T, p string) { appendUser(t, p, "more by the user\n") }},
		{name: "replaced by a rename, the same size and time", rel: "a.txt", want: "USR!\n",
			user: func(t *testing.T, p string) {
				var st unix.Stat_t
				must(t, unix.Lstat(p, &st))
				must(t, os.WriteFile(p+".swp", []byte("USR!\n"), 0o644))
				mtime := time.Unix(st.Mtim.Unix())
				must(t, os.Chtimes(p+".swp", mtime, mtime))
				must(t, os.Rename(p+".swp", p))
			}},
		{name: "written, then made again while removed", rel: "a.txt", want: "made again\n", saved: "USER\nmore by the user\n",
			user:  func(t *testing.T, p string) { appendUser(t, p, "more by the user\n") },
			aside: func(t *testing.T, p string) { must(t, os.WriteFile(p, []byte("made again\n"), 0o644)) }},
		{name: "a link pointed elsewhere", rel: "l", link: true, want: "b.txt",
			user: func(t *testing.T, p string) {
				must(t, os.Remove(p))
				must(t, os.Symlink("b.txt", p))
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, root := raceTree(t, map[string]string{"a.txt": "USER\n", "b.txt": "b\n", "sub/c.txt": "c\n"})
			if tc.link {
				// A link of the copy: the sandbox made again.
				must(t, os.Symlink("a.txt", filepath.Join(root, "l")))
				var err error
				s, err = create(context.Background(), Options{Home: filepath.Join(filepath.Dir(root), "home2"), Persona: "p", Root: root, Cwd: root})
				must(t, err)
			}
			must(t, os.Remove(filepath.Join(s.Tree, tc.rel)))
			must(t, os.Remove(filepath.Join(s.Tree, "sub/c.txt")))
			p := filepath.Join(root, tc.rel)
			raced := raceAt(t, tc.rel, func() { tc.user(t, p) })
			if tc.aside != nil {
				syncHook = func(stage string) {
					if stage == "aside" {
						tc.aside(t, p)
					}
				}
				t.Cleanup(func() { syncHook = nil })
			}
			r, err := s.Sync(context.Background(), SyncOptions{Deletes: true})
			must(t, err)
			if !raced() {
				t.Fatal("the user never wrote between the check and the removal")
			}
			var got string
			if tc.link {
				got, err = os.Readlink(p)
			} else {
				var b []byte
				b, err = os.ReadFile(p)
				got = string(b)
			}
			if err != nil || got != tc.want {
				t.Errorf("real %s = %q (%v), want the user's %q", tc.rel, got, err, tc.want)
			}
			if len(r.Conflicts) != 1 || r.Conflicts[0].Path != tc.rel || r.Conflicts[0].Saved != "" {
				t.Fatalf("conflicts = %+v, want %s, nothing of the agent's saved", r.Conflicts, tc.rel)
			}
			if tc.saved != "" {
				saved := filepath.Join(s.Dir, ConflictsDir, tc.rel+".replaced")
				if !strings.Contains(r.Conflicts[0].Reason, saved) {
					t.Errorf("reason = %q, want it to name %s", r.Conflicts[0].Reason, saved)
				}
				if b, err := os.ReadFile(saved); string(b) != tc.saved {
					t.Errorf("the replaced version saved = %q (%v), want %q", b, err, tc.saved)
				}
			} else if r.Conflicts[0].Reason != "" {
				t.Errorf("reason = %q, want none", r.Conflicts[0].Reason)
			}
			if !slices.Equal(r.Deleted, []string{"sub/c.txt"}) {
				t.Errorf("deleted = %v, want [sub/c.txt]", r.Deleted)
			}
			if _, err := os.Lstat(filepath.Join(root, "sub/c.txt")); !os.IsNotExist(err) {
				t.Errorf("the other deletion did not apply: %v", err)
			}
			if left := tempFiles(t, root); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

func appendUser(t *testing.T, p, text string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(text)
	must(t, err)
	must(t, f.Close())
}
