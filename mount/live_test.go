//go:build linux

package mount

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// waitFor polls, at most 60 s (a bound for a loaded machine, not a
// timing requirement), until ok holds.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 60 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func contentIs(path, want string) func() bool {
	return func() bool {
		got, err := os.ReadFile(path)
		return err == nil && string(got) == want
	}
}

func liveSession(t *testing.T, o LiveOptions) (*Sandbox, *Live, string) {
	t.Helper()
	root := t.TempDir()
	for rel, content := range map[string]string{
		"a.txt": "a\n", "both.txt": "both\n", "gone.txt": "gone\n", "user-gone.txt": "user gone\n",
		"sub/b.txt": "b\n", "ro.txt": "ro\n", ".agentreadonly": "ro.txt\n", ".agentignore": "*.log\n",
		"AGENTS.md": "real agents\n",
	} {
		p := filepath.Join(root, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	must(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	s, err := create(context.Background(), Options{Home: t.TempDir(), Persona: "p", Root: root, Cwd: root, Hide: []string{"AGENTS.md"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Materialize("AGENTS.md", "persona\n"); err != nil {
		t.Fatal(err)
	}
	must(t, s.Save())
	l, err := s.Live(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Stop() })
	return s, l, root
}

// TestLive: files cross both ways while the harness runs, each once it
// settled; a file changed on both sides is a conflict, kept on both sides
// and reported at once; deletions cross only when asked; what never
// crosses in a sync-back does not cross live; the manifest on disk keeps
// up, so that the final sync-back (or one after a crash) finds nothing
// left to do for what crossed.
func TestLive(t *testing.T) {
	var conflicts atomic.Int32
	s, l, root := liveSession(t, LiveOptions{Deletes: true, OnConflict: func(Conflict) { conflicts.Add(1) }})
	box := func(rel string) string { return filepath.Join(s.Tree, rel) }
	real := func(rel string) string { return filepath.Join(root, rel) }

	// The agent writes; the file reaches the real tree.
	must(t, os.WriteFile(box("new.txt"), []byte("by the agent\n"), 0o644))
	must(t, os.WriteFile(box("a.txt"), []byte("a by the agent\n"), 0o644))
	must(t, os.Chmod(box("a.txt"), 0o600))
	must(t, os.MkdirAll(box("newdir/deeper"), 0o755))
	must(t, os.WriteFile(box("newdir/deeper/x.txt"), []byte("x\n"), 0o644))
	waitFor(t, "new.txt in the real tree", contentIs(real("new.txt"), "by the agent\n"))
	waitFor(t, "a.txt in the real tree", contentIs(real("a.txt"), "a by the agent\n"))
	waitFor(t, "newdir/deeper/x.txt in the real tree", contentIs(real("newdir/deeper/x.txt"), "x\n"))
	if fi, _ := os.Stat(real("a.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("a.txt crossed with mode %v, want 0600", fi.Mode())
	}

	// The user writes; the file reaches the sandbox.
	must(t, os.WriteFile(real("user.txt"), []byte("by the user\n"), 0o644))
	must(t, os.WriteFile(real("sub/b.txt"), []byte("b by the user\n"), 0o644))
	waitFor(t, "user.txt in the sandbox", contentIs(box("user.txt"), "by the user\n"))
	waitFor(t, "sub/b.txt in the sandbox", contentIs(box("sub/b.txt"), "b by the user\n"))

	// Both change one file: a conflict, both kept, reported at once.
	must(t, os.WriteFile(box("both.txt"), []byte("both by the agent\n"), 0o644))
	must(t, os.WriteFile(real("both.txt"), []byte("both by the user\n"), 0o644))
	waitFor(t, "the conflict reported", func() bool { return conflicts.Load() == 1 })

	// Deletions, both ways.
	must(t, os.Remove(box("gone.txt")))
	must(t, os.Remove(real("user-gone.txt")))
	waitFor(t, "gone.txt deleted in the real tree", func() bool { _, err := os.Stat(real("gone.txt")); return os.IsNotExist(err) })
	waitFor(t, "user-gone.txt deleted in the sandbox", func() bool { _, err := os.Stat(box("user-gone.txt")); return os.IsNotExist(err) })

	// What never crosses.
	must(t, os.WriteFile(box("debug.log"), []byte("ignored\n"), 0o644))
	must(t, os.Chmod(box("ro.txt"), 0o644))
	must(t, os.WriteFile(box("ro.txt"), []byte("read-only\n"), 0o644))
	must(t, os.WriteFile(box("AGENTS.md"), []byte("persona, edited\n"), 0o644))
	must(t, os.WriteFile(box(".git/config"), []byte("[core]\n"), 0o644))
	must(t, os.WriteFile(real("AGENTS.md"), []byte("real agents, edited\n"), 0o644))
	must(t, os.WriteFile(box("marker.txt"), []byte("last\n"), 0o644))
	waitFor(t, "marker.txt in the real tree", contentIs(real("marker.txt"), "last\n"))
	time.Sleep(300 * time.Millisecond)

	rep := l.Stop()
	if rep.ToReal != 4 || rep.ToSandbox != 2 || rep.Deleted != 2 || len(rep.Conflicts) != 1 || len(rep.Failed) != 0 {
		t.Errorf("live report: %+v", rep)
	}
	for rel, want := range map[string]string{"both.txt": "both by the user\n", "ro.txt": "ro\n", "AGENTS.md": "real agents, edited\n"} {
		if got, _ := os.ReadFile(real(rel)); string(got) != want {
			t.Errorf("real %s = %q, want %q", rel, got, want)
		}
	}
	for _, rel := range []string{"debug.log", ".git/config"} {
		if _, err := os.Stat(real(rel)); err == nil {
			t.Errorf("%s crossed to the real tree", rel)
		}
	}
	if got, _ := os.ReadFile(box("AGENTS.md")); string(got) != "persona, edited\n" {
		t.Errorf("the sandbox's AGENTS.md = %q: the real one crossed", got)
	}
	if got, _ := os.ReadFile(filepath.Join(s.Dir, ConflictsDir, "both.txt")); string(got) != "both by the agent\n" {
		t.Errorf("the agent's version of both.txt saved: %q", got)
	}

	// After a crash: the session read from disk syncs nothing twice.
	reopened, err := Open(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	after, err := reopened.Sync(context.Background(), SyncOptions{Deletes: true, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Created)+len(after.Updated)+len(after.Deleted) != 0 || len(after.Conflicts) != 1 {
		t.Errorf("the sync-back after the live sync: %+v", after)
	}
}

// TestLiveWithoutDeletes: without Deletes, a deletion stays on its side.
func TestLiveWithoutDeletes(t *testing.T) {
	s, l, root := liveSession(t, LiveOptions{})
	must(t, os.Remove(filepath.Join(s.Tree, "gone.txt")))
	must(t, os.Remove(filepath.Join(root, "user-gone.txt")))
	must(t, os.WriteFile(filepath.Join(s.Tree, "marker.txt"), []byte("m\n"), 0o644))
	waitFor(t, "marker.txt in the real tree", contentIs(filepath.Join(root, "marker.txt"), "m\n"))
	time.Sleep(300 * time.Millisecond)
	l.Stop()
	if _, err := os.Stat(filepath.Join(root, "gone.txt")); err != nil {
		t.Error("the agent's deletion crossed without Deletes")
	}
	if _, err := os.Stat(filepath.Join(s.Tree, "user-gone.txt")); err != nil {
		t.Error("the user's deletion crossed without Deletes")
	}
}

// TestLiveFlood: 2,000 files the agent writes in one burst all arrive
// whole, and no file is ever seen in the real tree with other content than
// its whole content.
func TestLiveFlood(t *testing.T) {
	s, l, root := liveSession(t, LiveOptions{})
	const n = 2000
	content := func(i int) []byte {
		return bytes.Repeat([]byte(fmt.Sprintf("file %d\n", i)), 100+i%50)
	}
	var torn atomic.Int32
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // a reader of the real tree, all along
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			for i := 0; i < n; i += 7 {
				if got, err := os.ReadFile(filepath.Join(root, "flood", fmt.Sprintf("f%04d.txt", i))); err == nil && !bytes.Equal(got, content(i)) {
					torn.Add(1)
				}
			}
		}
	}()
	must(t, os.MkdirAll(filepath.Join(s.Tree, "flood"), 0o755))
	for i := range n {
		// Written in two parts, as a writer that flushes does.
		f, err := os.Create(filepath.Join(s.Tree, "flood", fmt.Sprintf("f%04d.txt", i)))
		if err != nil {
			t.Fatal(err)
		}
		c := content(i)
		f.Write(c[:len(c)/2])
		f.Write(c[len(c)/2:])
		f.Close()
	}
	waitFor(t, "the flood in the real tree", func() bool {
		entries, _ := os.ReadDir(filepath.Join(root, "flood"))
		return len(entries) == n
	})
	close(stop)
	wg.Wait()
	l.Stop()
	for i := range n {
		got, err := os.ReadFile(filepath.Join(root, "flood", fmt.Sprintf("f%04d.txt", i)))
		if err != nil || sha256.Sum256(got) != sha256.Sum256(content(i)) {
			t.Fatalf("f%04d.txt arrived as %d bytes (%v)", i, len(got), err)
		}
	}
	if torn.Load() > 0 {
		t.Errorf("a partial file was seen %d times in the real tree", torn.Load())
	}
}

// TestLiveFallsBackToScans: without watches (the kernel's limit, or events
// lost), the trees are compared with the manifest, and files still cross
// both ways.
func TestLiveFallsBackToScans(t *testing.T) {
	s, l, root := liveSession(t, LiveOptions{Poll: 50 * time.Millisecond})
	// No event will come any more: as if no watch could be set.
	for _, w := range l.w.WatchList() {
		must(t, l.w.Remove(w))
	}
	l.mu.Lock()
	l.blind = true
	l.mu.Unlock()
	l.nudge()
	must(t, os.WriteFile(filepath.Join(s.Tree, "new.txt"), []byte("agent\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "sub", "b.txt"), []byte("user\n"), 0o644))
	waitFor(t, "new.txt in the real tree", contentIs(filepath.Join(root, "new.txt"), "agent\n"))
	waitFor(t, "sub/b.txt in the sandbox", contentIs(filepath.Join(s.Tree, "sub", "b.txt"), "user\n"))
	if rep := l.Stop(); rep.ToReal != 1 || rep.ToSandbox != 1 {
		t.Errorf("live report: %+v", rep)
	}
}

// BenchmarkLiveLatency measures, for each direction, the time from a
// write settling on one side to the file on the other (Settle included),
// as p50 and p95 in milliseconds, on a tree of b.N files written one at a
// time.
func BenchmarkLiveLatency(b *testing.B) {
	for _, toReal := range []bool{true, false} {
		name := "to the sandbox"
		if toReal {
			name = "to the repository"
		}
		b.Run(name, func(b *testing.B) {
			root, home := b.TempDir(), b.TempDir()
			if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			s, err := create(context.Background(), Options{Home: home, Persona: "p", Root: root, Cwd: root})
			if err != nil {
				b.Fatal(err)
			}
			l, err := s.Live(LiveOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Stop()
			from, to := root, s.Tree
			if toReal {
				from, to = s.Tree, root
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				rel := fmt.Sprintf("f%06d.txt", i)
				want := []byte(fmt.Sprintf("content %d\n", i))
				if err := os.WriteFile(filepath.Join(from, rel), want, 0o644); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				for {
					if got, err := os.ReadFile(filepath.Join(to, rel)); err == nil && bytes.Equal(got, want) {
						break
					}
					if time.Since(start) > 10*time.Second {
						b.Fatalf("%s did not cross", rel)
					}
					time.Sleep(time.Millisecond)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}

// TestLiveTypeChanges: live sync follows the type-change rules of the
// final sync-back. With Deletes, a file the agent puts in the place of a
// directory whose files it removed, and a directory in the place of a
// file, cross once the removals did, and a directory a removal emptied
// goes; without, nothing of them crosses and nothing is a conflict or a
// failure: the final sync-back reports them as waiting, and a sync with
// deletions applies them. The session always finishes.
func TestLiveTypeChanges(t *testing.T) {
	for _, deletes := range []bool{true, false} {
		t.Run(fmt.Sprintf("deletes %v", deletes), func(t *testing.T) {
			root := t.TempDir()
			for rel, content := range map[string]string{
				"d1/x": "x\n", "f": "f\n", "pkg/m.go": "m\n", "pkg/sub/s.go": "s\n", "keep.txt": "k\n",
			} {
				write(t, filepath.Join(root, rel), content)
			}
			s, err := create(context.Background(), Options{Home: t.TempDir(), Persona: "p", Root: root, Cwd: root})
			must(t, err)
			must(t, s.Save())
			var conflicts atomic.Int32
			l, err := s.Live(LiveOptions{Deletes: deletes, OnConflict: func(Conflict) { conflicts.Add(1) }})
			must(t, err)
			box := func(rel string) string { return filepath.Join(s.Tree, rel) }
			must(t, os.Remove(box("d1/x")))
			must(t, os.Remove(box("d1")))
			write(t, box("d1"), "now a file\n")
			must(t, os.Remove(box("f")))
			write(t, box("f/a"), "now a directory\n")
			must(t, os.RemoveAll(box("pkg")))
			write(t, box("marker.txt"), "m\n")
			waitFor(t, "marker.txt in the real tree", contentIs(filepath.Join(root, "marker.txt"), "m\n"))
			time.Sleep(300 * time.Millisecond)
			rep := l.Stop()
			if conflicts.Load() != 0 || len(rep.Conflicts) != 0 || len(rep.Failed) != 0 {
				t.Fatalf("live report: %+v", rep)
			}
			if deletes {
				if _, err := os.Lstat(filepath.Join(root, "pkg")); !os.IsNotExist(err) {
					t.Errorf("the directories the deletions emptied stay: %v", err)
				}
			} else {
				for rel, want := range map[string]string{"d1/x": "x\n", "f": "f\n", "pkg/sub/s.go": "s\n"} {
					if got, _ := os.ReadFile(filepath.Join(root, rel)); string(got) != want {
						t.Errorf("real %s = %q without Deletes, want %q", rel, got, want)
					}
				}
				r, err := s.Sync(context.Background(), SyncOptions{})
				must(t, err)
				if len(r.Conflicts) != 0 || len(r.Failed) != 0 || !slices.Equal(r.Blocked, []string{"d1", "f/a"}) {
					t.Errorf("sync-back without deletes: %+v", r)
				}
			}
			r, err := s.Sync(context.Background(), SyncOptions{Deletes: true})
			must(t, err)
			if len(r.Conflicts) != 0 || len(r.Failed) != 0 || len(r.Blocked) != 0 {
				t.Errorf("sync-back: %+v", r)
			}
			for rel, want := range map[string]string{"d1": "now a file\n", "f/a": "now a directory\n", "keep.txt": "k\n"} {
				if got, err := os.ReadFile(filepath.Join(root, rel)); string(got) != want {
					t.Errorf("real %s = %q (%v), want %q", rel, got, err, want)
				}
			}
			if _, err := os.Lstat(filepath.Join(root, "pkg")); !os.IsNotExist(err) {
				t.Errorf("real pkg stays: %v", err)
			}
			again, err := s.Sync(context.Background(), SyncOptions{Deletes: true})
			must(t, err)
			if again.Changes()+len(again.Conflicts)+len(again.Blocked)+len(again.Failed) != 0 {
				t.Errorf("a second sync-back: %+v", again)
			}
		})
	}
}
