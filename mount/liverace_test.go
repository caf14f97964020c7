//go:build linux

package mount

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestLiveRace: a write on the side a file crosses to, between live
// sync's check of that side and the replacement (or a file made there
// that the other side made too), is never lost, in either direction: the
// writer's bytes stay, the file is a conflict, reported at once and in
// the live report, with the agent's version saved under conflicts/.
func TestLiveRace(t *testing.T) {
	tests := []struct {
		name   string
		rel    string
		toReal bool // the file crosses to the real tree
		noExch bool // the file system cannot exchange
	}{
		{name: "the user writes the file the agent's version replaces", rel: "a.txt", toReal: true},
		{name: "the user makes the file the agent made", rel: "sub/new.txt", toReal: true},
		{name: "the agent writes the file the user's version replaces", rel: "sub/b.txt"},
		{name: "the agent makes the file the user made", rel: "new.txt"},
		{name: "the user writes the file, no exchange", rel: "a.txt", toReal: true, noExch: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const agent, user = "the agent's version\n", "the user's version, longer\n"
			// Both hooks are set before Live starts and cleared after it
			// stopped; the writer runs in Live's goroutine.
			if tc.noExch {
				noExchange(t)
			}
			var at atomic.Pointer[string] // where the writer writes
			var raced atomic.Bool
			var werr atomic.Pointer[error]
			raceAt(t, tc.rel, func() {
				raced.Store(true)
				content := agent
				if tc.toReal {
					content = user
				}
				if err := os.WriteFile(*at.Load(), []byte(content), 0o644); err != nil {
					werr.Store(&err)
				}
			})
			var conflicts, crossed atomic.Int32
			s, l, r := liveSession(t, LiveOptions{OnConflict: func(c Conflict) {
				if c.Path == tc.rel {
					conflicts.Add(1)
				}
			}, OnCross: func(rel string, _ bool) {
				if rel == tc.rel {
					crossed.Add(1)
				}
			}})
			root, tree := r, s.Tree
			if tc.toReal {
				at.Store(ptr(filepath.Join(root, tc.rel)))
			} else {
				at.Store(ptr(filepath.Join(tree, tc.rel)))
			}
			if tc.toReal {
				write(t, filepath.Join(tree, tc.rel), agent)
			} else {
				write(t, filepath.Join(root, tc.rel), user)
			}
			waitFor(t, "the conflict reported", func() bool { return conflicts.Load()+crossed.Load() > 0 })
			rep := l.Stop()
			if !raced.Load() {
				t.Fatal("nobody wrote between the check and the replacement")
			}
			if err := werr.Load(); err != nil {
				t.Fatal(*err)
			}
			for side, want := range map[string]string{root: user, tree: agent} {
				if got, _ := os.ReadFile(filepath.Join(side, tc.rel)); string(got) != want {
					t.Errorf("%s in %s = %q, want %q", tc.rel, side, got, want)
				}
			}
			if len(rep.Conflicts) != 1 || rep.Conflicts[0].Path != tc.rel || rep.ToReal+rep.ToSandbox != 0 {
				t.Fatalf("live report: %+v", rep)
			}
			if got, err := os.ReadFile(rep.Conflicts[0].Saved); string(got) != agent {
				t.Errorf("the agent's version saved = %q (%v), want %q", got, err, agent)
			}
			for _, side := range []string{root, tree} {
				if left := tempFiles(t, side); len(left) > 0 {
					t.Errorf("temporary files left: %v", left)
				}
			}
		})
	}
}

// TestLiveConflictOfADeletion: the user changes a file the agent
// deleted: a conflict with no saved version (Saved empty), the user's file
// kept, the sandbox's still gone.
func TestLiveConflictOfADeletion(t *testing.T) {
	got := make(chan Conflict, 4)
	s, l, root := liveSession(t, LiveOptions{OnConflict: func(c Conflict) { got <- c }})
	must(t, os.Remove(filepath.Join(s.Tree, "gone.txt")))
	write(t, filepath.Join(s.Tree, "marker.txt"), "m\n")
	waitFor(t, "marker.txt in the real tree", contentIs(filepath.Join(root, "marker.txt"), "m\n"))
	write(t, filepath.Join(root, "gone.txt"), "gone, edited by the user\n")
	var c Conflict
	select {
	case c = <-got:
	case <-time.After(60 * time.Second): // a bound for a loaded machine
	}
	rep := l.Stop()
	if c.Path != "gone.txt" || c.Saved != "" || c.Real != filepath.Join(root, "gone.txt") {
		t.Errorf("conflict = %+v, want gone.txt, nothing saved", c)
	}
	if len(rep.Conflicts) != 1 || len(rep.Failed) != 0 {
		t.Errorf("live report: %+v", rep)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "gone.txt")); string(data) != "gone, edited by the user\n" {
		t.Errorf("real gone.txt = %q", data)
	}
	if _, err := os.Lstat(filepath.Join(s.Tree, "gone.txt")); !os.IsNotExist(err) {
		t.Errorf("the sandbox's gone.txt came back: %v", err)
	}
}

// TestLiveConflictUnsavable: a conflict whose agent's version cannot be
// saved is a failure, not a conflict without a saved version (which
// would read as a deletion), and both files stay.
func TestLiveConflictUnsavable(t *testing.T) {
	var conflicts atomic.Int32
	s, l, root := liveSession(t, LiveOptions{OnConflict: func(Conflict) { conflicts.Add(1) }})
	write(t, filepath.Join(s.Dir, ConflictsDir), "not a directory")
	write(t, filepath.Join(s.Tree, "both.txt"), "both by the agent\n")
	write(t, filepath.Join(root, "both.txt"), "both by the user\n")
	// Events come in order: once the marker crossed, both.txt is pending
	// on both sides, and Stop carries it out.
	write(t, filepath.Join(s.Tree, "marker.txt"), "m\n")
	waitFor(t, "marker.txt in the real tree", contentIs(filepath.Join(root, "marker.txt"), "m\n"))
	rep := l.Stop()
	if conflicts.Load() != 0 || len(rep.Conflicts) != 0 {
		t.Errorf("conflicts reported: %+v", rep.Conflicts)
	}
	if len(rep.Failed) != 1 || rep.Failed[0].Path != "both.txt" || !strings.Contains(rep.Failed[0].Error, "cannot save the agent's version") {
		t.Errorf("failed = %+v, want both.txt", rep.Failed)
	}
	for side, want := range map[string]string{root: "both by the user\n", s.Tree: "both by the agent\n"} {
		if got, _ := os.ReadFile(filepath.Join(side, "both.txt")); string(got) != want {
			t.Errorf("both.txt in %s = %q, want %q", side, got, want)
		}
	}
}

// TestLiveDeleteRace: a user's write to a real file between live sync's
// check of it and the removal that carries the agent's deletion over is
// never lost: the file stays as the user wrote it, it is a conflict
// (reported at once and in the live report, nothing of the agent's to
// save), and no deletion is counted.
func TestLiveDeleteRace(t *testing.T) {
	const user = "gone, written by the user\n"
	var werr atomic.Pointer[error]
	var raced atomic.Bool
	var root atomic.Pointer[string]
	raceAt(t, "gone.txt", func() {
		raced.Store(true)
		if err := os.WriteFile(filepath.Join(*root.Load(), "gone.txt"), []byte(user), 0o644); err != nil {
			werr.Store(&err)
		}
	})
	var conflicts atomic.Int32
	s, l, r := liveSession(t, LiveOptions{Deletes: true, OnConflict: func(c Conflict) {
		if c.Path == "gone.txt" {
			conflicts.Add(1)
		}
	}})
	root.Store(&r)
	must(t, os.Remove(filepath.Join(s.Tree, "gone.txt")))
	waitFor(t, "the conflict reported", func() bool { return conflicts.Load() > 0 })
	rep := l.Stop()
	if !raced.Load() {
		t.Fatal("nobody wrote between the check and the removal")
	}
	if err := werr.Load(); err != nil {
		t.Fatal(*err)
	}
	if got, err := os.ReadFile(filepath.Join(r, "gone.txt")); string(got) != user {
		t.Errorf("real gone.txt = %q (%v), want the user's", got, err)
	}
	if len(rep.Conflicts) != 1 || rep.Conflicts[0].Path != "gone.txt" || rep.Conflicts[0].Saved != "" || rep.Deleted != 0 {
		t.Errorf("live report: %+v", rep)
	}
	if left := tempFiles(t, r); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
