//go:build linux

package mount

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// agentOps are what an agent (and, for a few, the user) does to a tree
// while the harness runs: each takes the sandbox tree, the real root, an
// outside directory and a source of randomness, and may fail silently
// when what it acts on is not there.
var agentOps = []struct {
	name string
	do   func(tree, real, outside string, r *rand.Rand)
}{
	{"append", func(tree, _, _ string, r *rand.Rand) { appendTo(pick(tree, r, false), "agent\n") }},
	{"rewrite same bytes", func(tree, _, _ string, r *rand.Rand) {
		if p := pick(tree, r, false); p != "" {
			data, _ := os.ReadFile(p)
			os.WriteFile(p, data, 0o644)
		}
	}},
	{"create", func(tree, _, _ string, r *rand.Rand) {
		if d := pick(tree, r, true); d != "" {
			os.WriteFile(filepath.Join(d, fmt.Sprintf("new%d.txt", r.IntN(1000))), []byte("new\n"), 0o644)
		}
	}},
	{"remove", func(tree, _, _ string, r *rand.Rand) { os.Remove(pick(tree, r, false)) }},
	{"mkdir with files", func(tree, _, _ string, r *rand.Rand) {
		if d := pick(tree, r, true); d != "" {
			nd := filepath.Join(d, fmt.Sprintf("dir%d", r.IntN(1000)), "deeper")
			os.MkdirAll(nd, 0o755)
			os.WriteFile(filepath.Join(nd, "x.txt"), []byte("x\n"), 0o644)
			os.WriteFile(filepath.Join(filepath.Dir(nd), "y.txt"), []byte("y\n"), 0o600)
		}
	}},
	{"rename file", func(tree, _, _ string, r *rand.Rand) {
		if p, d := pick(tree, r, false), pick(tree, r, true); p != "" && d != "" {
			os.Rename(p, filepath.Join(d, fmt.Sprintf("moved%d.txt", r.IntN(1000))))
		}
	}},
	{"rename dir", func(tree, _, _ string, r *rand.Rand) {
		if d := pick(tree, r, true); d != "" && d != tree {
			os.Rename(d, filepath.Join(filepath.Dir(d), fmt.Sprintf("renamed%d", r.IntN(1000))))
		}
	}},
	{"remove dir", func(tree, _, _ string, r *rand.Rand) {
		if d := pick(tree, r, true); d != "" && d != tree {
			os.RemoveAll(d)
		}
	}},
	{"dir out and back", func(tree, _, outside string, r *rand.Rand) {
		if d := pick(tree, r, true); d != "" && d != tree {
			tmp := filepath.Join(outside, fmt.Sprintf("away%d", r.IntN(1000)))
			if os.Rename(d, tmp) == nil {
				appendTo(filepath.Join(tmp, "while-away.txt"), "away\n")
				os.Rename(tmp, d)
			}
		}
	}},
	{"chmod", func(tree, _, _ string, r *rand.Rand) { os.Chmod(pick(tree, r, false), 0o755) }},
	{"touch", func(tree, _, _ string, r *rand.Rand) {
		if p := pick(tree, r, false); p != "" {
			unix.UtimesNano(p, []unix.Timespec{{Sec: 1e9}, {Sec: 1e9}})
		}
	}},
	{"file to symlink", func(tree, _, _ string, r *rand.Rand) {
		if p := pick(tree, r, false); p != "" {
			os.Remove(p)
			os.Symlink("elsewhere", p)
		}
	}},
	{"dir to symlink out", func(tree, _, outside string, r *rand.Rand) {
		if d := pick(tree, r, true); d != "" && d != tree {
			os.RemoveAll(d)
			os.Symlink(outside, d)
		}
	}},
	{"fifo", func(tree, _, _ string, r *rand.Rand) {
		if d := pick(tree, r, true); d != "" {
			unix.Mkfifo(filepath.Join(d, fmt.Sprintf("fifo%d", r.IntN(1000))), 0o644)
		}
	}},
	{"hard link", func(tree, _, _ string, r *rand.Rand) {
		if p := pick(tree, r, false); p != "" && r.IntN(4) == 0 {
			os.Link(p, p+".link")
		}
	}},
	{"nested git", func(tree, _, _ string, r *rand.Rand) {
		if d := pick(tree, r, true); d != "" {
			os.MkdirAll(filepath.Join(d, ".git", "objects"), 0o755)
			os.WriteFile(filepath.Join(d, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
		}
	}},
	{"create then remove", func(tree, _, _ string, r *rand.Rand) {
		if d := pick(tree, r, true); d != "" {
			p := filepath.Join(d, "transient.txt")
			os.WriteFile(p, []byte("t\n"), 0o644)
			os.Remove(p)
		}
	}},
	{"user edits the real file", func(_, real, _ string, r *rand.Rand) { appendTo(pick(real, r, false), "user\n") }},
}

func appendTo(p, text string) {
	if p == "" {
		return
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		f.WriteString(text)
		f.Close()
	}
}

// pick returns a random regular file (or directory, the root included)
// below root, outside .git; "" when there is none.
func pick(root string, r *rand.Rand, dir bool) string {
	var all []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if (dir && d.IsDir()) || (!dir && d.Type().IsRegular()) {
			all = append(all, p)
		}
		return nil
	})
	sort.Strings(all)
	if len(all) == 0 {
		return ""
	}
	return all[r.IntN(len(all))]
}

// stateOf describes what a sync saw of the sandbox, as a refresh uses it:
// every path, its type, and for a regular file its mode, size, time and
// links.
func stateOf(after *seenState) []string {
	var out []string
	for e := range after.all() {
		line := fmt.Sprintf("%s %o", e.rel, e.st.mode&unix.S_IFMT)
		if e.st.mode&unix.S_IFMT == unix.S_IFREG {
			line += fmt.Sprintf(" %o %d %d.%d %d", e.st.mode&0o7777, e.st.size, e.st.mtime.Sec, e.st.mtime.Nsec, e.st.nlink)
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}

// TestJournalSeesWhatTheWalkSees: for random sequences of what agents do,
// sync-back narrowed by the journal reports exactly what sync-back that
// walks the whole sandbox reports, and sees the same sandbox for a warm
// park; a journal that cannot be trusted falls back to the walk.
func TestJournalSeesWhatTheWalkSees(t *testing.T) {
	used := 0
	for seed := range uint64(60) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			root, outside := t.TempDir(), t.TempDir()
			for _, rel := range []string{"a.txt", "b/c.txt", "b/d/e.txt", "f/g.txt", "f/h/i.txt", "j/k.txt", "ro.txt"} {
				p := filepath.Join(root, rel)
				must(t, os.MkdirAll(filepath.Dir(p), 0o755))
				must(t, os.WriteFile(p, []byte(rel+"\n"), 0o644))
			}
			must(t, os.WriteFile(filepath.Join(root, ".agentreadonly"), []byte("ro.txt\n"), 0o644))
			must(t, os.Symlink("a.txt", filepath.Join(root, "link")))
			s, err := create(context.Background(), Options{Home: t.TempDir(), Persona: "p", Root: root, Cwd: root, Hide: []string{"AGENTS.md"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Materialize("AGENTS.md", "persona\n"); err != nil {
				t.Fatal(err)
			}
			if s.journal == nil {
				t.Fatal("no journal was started")
			}
			var done []string
			for range 1 + r.IntN(6) {
				op := agentOps[r.IntN(len(agentOps))]
				op.do(s.Tree, root, outside, r)
				done = append(done, op.name)
			}
			journaled := s.journal
			narrowed, err1 := s.Sync(context.Background(), SyncOptions{DryRun: true, Remember: true})
			if s.journal != nil {
				t.Fatal("the journal was not consumed by Sync")
			}
			seenNarrowed := stateOf(s.after)
			walked, err2 := s.Sync(context.Background(), SyncOptions{DryRun: true, Remember: true})
			seenWalked := stateOf(s.after)
			if (err1 == nil) != (err2 == nil) {
				t.Fatalf("after %q: errors %v with the journal, %v walking", done, err1, err2)
			}
			a, _ := json.MarshalIndent(narrowed, "", " ")
			b, _ := json.MarshalIndent(walked, "", " ")
			if string(a) != string(b) {
				t.Errorf("after %q: with the journal\n%s\nwalking\n%s", done, a, b)
			}
			if !reflect.DeepEqual(seenNarrowed, seenWalked) {
				t.Errorf("after %q: the sandbox seen with the journal differs:\n%s", done, diffLines(seenNarrowed, seenWalked))
			}
			if journaled.trusted {
				used++
			}
		})
	}
	t.Logf("the journal was trusted in %d of 60 runs", used)
	if used < 25 {
		t.Errorf("the journal was trusted in %d of 60 runs; the test shows little", used)
	}
}

// TestJournalCanFail: the comparison above fails when the journal misses a
// change (here, a write it is not told of), so it proves something.
func TestJournalCanFail(t *testing.T) {
	root := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644))
	s, err := create(context.Background(), Options{Home: t.TempDir(), Persona: "p", Root: root, Cwd: root})
	if err != nil {
		t.Fatal(err)
	}
	s.journal.close()
	s.journal = &journal{dirty: map[string]struct{}{}, done: make(chan struct{})}
	appendTo(filepath.Join(s.Tree, "a.txt"), "agent\n")
	narrowed, err := s.Sync(context.Background(), SyncOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	walked, err := s.Sync(context.Background(), SyncOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(narrowed.Updated, ",") == strings.Join(walked.Updated, ",") {
		t.Fatalf("a journal told nothing found what the walk found: %v", walked.Updated)
	}
}

// TestJournalSeesTemporaryLinks: a write through a hard link made and
// removed during the run (no event names the file written) is not lost:
// the journal is not trusted, and the walk finds it.
func TestJournalSeesTemporaryLinks(t *testing.T) {
	root := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("original a\n"), 0o644))
	s, err := create(context.Background(), Options{Home: t.TempDir(), Persona: "p", Root: root, Cwd: root})
	if err != nil {
		t.Fatal(err)
	}
	a, tmp := filepath.Join(s.Tree, "a.txt"), filepath.Join(s.Tree, "tmp-link")
	must(t, os.Link(a, tmp))
	must(t, os.WriteFile(tmp, []byte("the agent's a\n"), 0o644))
	must(t, os.Remove(tmp))
	j := s.journal
	rep, err := s.Sync(context.Background(), SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "the agent's a\n" {
		t.Errorf("the agent's a.txt did not come back (report %+v): %q; journal trusted %v, broken %q, dirty %v", rep, got, j.trusted, j.broken, j.dirty)
	}
}
