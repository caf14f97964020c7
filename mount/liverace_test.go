//go:build linux

package mount

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
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

func ptr[T any](v T) *T { return &v }
