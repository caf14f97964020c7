package session

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/internal/git"
	"github.com/seed-3bc194a6/workforce/internal/gittest"
)

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

// gitIn runs git in dir for a test (gittest.Run).
var gitIn = gittest.Run

// agentSession makes a session as a run that died after its agent worked
// leaves it, in a repository of files (name -> content): agent runs in
// the sandbox tree, then the session is left for Sync.
func agentSession(t *testing.T, files map[string]string, repo bool, agent func(tree string)) (root string, s *Session) {
	t.Helper()
	home := t.TempDir()
	root = t.TempDir()
	for name, content := range files {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
		must(t, os.WriteFile(filepath.Join(root, name), []byte(content), 0o644))
	}
	if repo {
		gitIn(t, root, "init", "-q", "-b", "main")
		gitIn(t, root, "add", "-A")
		gitIn(t, root, "commit", "-q", "-m", "start")
	}
	s = leaveSession(t, home, root, agent)
	return root, s
}

// committer is an agent that commits a.txt and b.txt (two commits) and
// leaves an uncommitted edit of c.txt.
func committer(t *testing.T) func(tree string) {
	return func(tree string) {
		must(t, os.WriteFile(filepath.Join(tree, "a.txt"), []byte("a by the agent\n"), 0o644))
		gitIn(t, tree, "commit", "-q", "-am", "first")
		must(t, os.WriteFile(filepath.Join(tree, "b.txt"), []byte("b by the agent\n"), 0o644))
		gitIn(t, tree, "commit", "-q", "-am", "second")
		must(t, os.WriteFile(filepath.Join(tree, "c.txt"), []byte("c by the agent\n"), 0o644))
	}
}

var abc = map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSyncBringsCommitsAsBranch: the agent's commits become its branch,
// recorded; what it committed stays on the branch, its loose edit syncs
// back; SyncCommitted brings the committed files as changes too.
func TestSyncBringsCommitsAsBranch(t *testing.T) {
	needGit(t)
	for _, syncCommitted := range []bool{false, true} {
		root, s := agentSession(t, abc, true, committer(t))
		rep, kept, err := s.Sync(context.Background(), SyncOptions{SyncCommitted: syncCommitted})
		if err != nil || kept {
			t.Fatalf("Sync() = %v, kept %v", err, kept)
		}
		r := s.Record
		if r.Branch != BranchName(s.ID()) || r.Commits != 2 || !git.IsObjectName(r.Head) {
			t.Fatalf("record: branch %q, %d commits, head %q; want %s, 2", r.Branch, r.Commits, r.Head, BranchName(s.ID()))
		}
		if got := gitIn(t, root, "log", "--format=%s", r.Branch); got != "second\nfirst\nstart\n" {
			t.Errorf("git log %s:\n%s", r.Branch, got)
		}
		if got := strings.TrimSpace(gitIn(t, root, "rev-parse", r.Branch)); got != r.Head {
			t.Errorf("the branch names %s, the record %s", got, r.Head)
		}
		wantA, wantOn := "a\n", []string{"a.txt", "b.txt"}
		if syncCommitted {
			wantA, wantOn = "a by the agent\n", nil
		}
		if got := read(t, filepath.Join(root, "a.txt")); got != wantA {
			t.Errorf("SyncCommitted %v: a.txt = %q, want %q", syncCommitted, got, wantA)
		}
		if !reflect.DeepEqual(rep.OnBranch, wantOn) {
			t.Errorf("SyncCommitted %v: OnBranch = %v, want %v", syncCommitted, rep.OnBranch, wantOn)
		}
		if got := read(t, filepath.Join(root, "c.txt")); got != "c by the agent\n" {
			t.Errorf("the loose edit: c.txt = %q", got)
		}
	}
}

// TestBranchNotTheSessions: a branch of the session's name that is not
// the session's is not replaced; the committed work then syncs back as
// changes, with a warning, and the session is kept for the commits.
func TestBranchNotTheSessions(t *testing.T) {
	needGit(t)
	root, s := agentSession(t, abc, true, committer(t))
	gitIn(t, root, "branch", BranchName(s.ID()))
	before := gitIn(t, root, "rev-parse", BranchName(s.ID()))
	var warned []string
	rep, kept, err := s.Sync(context.Background(), SyncOptions{Warn: func(m string) { warned = append(warned, m) }})
	if err != nil || !kept {
		t.Fatalf("Sync() = %v, kept %v; want kept", err, kept)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "not this session's") || !strings.Contains(warned[0], s.ID()) {
		t.Errorf("warnings %q", warned)
	}
	if gitIn(t, root, "rev-parse", BranchName(s.ID())) != before || s.Record.Branch != "" {
		t.Errorf("the user's branch was replaced, or recorded: %q", s.Record.Branch)
	}
	if got := read(t, filepath.Join(root, "a.txt")); got != "a by the agent\n" || len(rep.OnBranch) != 0 {
		t.Errorf("a.txt = %q, OnBranch %v; want the committed work synced as changes", got, rep.OnBranch)
	}
}

// TestApplyPart: Only applies part of the work; the rest stays, the
// session kept in phase Review; a second apply brings the rest.
func TestApplyPart(t *testing.T) {
	root, s := agentSession(t, abc, false, func(tree string) {
		for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
			must(t, os.WriteFile(filepath.Join(tree, f), []byte("agent\n"), 0o644))
		}
	})
	rep, kept, err := s.Sync(context.Background(), SyncOptions{Only: func(rel string) bool { return rel == "b.txt" }})
	if err != nil || !kept || !reflect.DeepEqual(rep.Updated, []string{"b.txt"}) || len(rep.OnBranch) != 0 {
		t.Fatalf("Sync(Only b.txt) = %+v, kept %v, %v; want b.txt updated, kept", rep, kept, err)
	}
	if read(t, filepath.Join(root, "a.txt")) != "a\n" || read(t, filepath.Join(root, "b.txt")) != "agent\n" {
		t.Error("the files applied are not b.txt alone")
	}
	if err := s.ReadRecord(); err != nil || s.Record.Phase != Review {
		t.Errorf("phase %q, %v; want review", s.Record.Phase, err)
	}
	rep, kept, err = s.Sync(context.Background(), SyncOptions{})
	if err != nil || kept || !reflect.DeepEqual(rep.Updated, []string{"a.txt", "c.txt"}) {
		t.Fatalf("Sync() of the rest = %+v, kept %v, %v", rep, kept, err)
	}
}

// TestDiscard: Discard removes the session and its branch; RemoveBranch
// leaves a branch moved since.
func TestDiscard(t *testing.T) {
	needGit(t)
	root, s := agentSession(t, abc, true, committer(t))
	if _, _, err := s.Sync(context.Background(), SyncOptions{Keep: true}); err != nil {
		t.Fatal(err)
	}
	moved := *s
	gitIn(t, root, "branch", "-f", "moved", s.Record.Branch)
	moved.Record.Branch, moved.Record.Head = "moved", strings.Repeat("0", 40)
	if err := moved.RemoveBranch(); err == nil || !strings.Contains(err.Error(), "has moved") {
		t.Errorf("RemoveBranch of a moved branch = %v", err)
	}
	// Checked out in a worktree of the user's: left.
	wt := filepath.Join(t.TempDir(), "wt")
	gitIn(t, root, "worktree", "add", "-q", wt, s.Record.Branch)
	if err := s.RemoveBranch(); err == nil || !strings.Contains(err.Error(), "is checked out") {
		t.Errorf("RemoveBranch of a branch checked out = %v", err)
	}
	gitIn(t, root, "worktree", "remove", wt)
	if err := s.Discard(false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir); err == nil {
		t.Error("the session is still there")
	}
	if got := gitIn(t, root, "branch", "--list", "workforce/*"); got != "" {
		t.Errorf("branches left: %q", got)
	}
	if got := gitIn(t, root, "branch", "--list", "moved"); got == "" {
		t.Error("the moved branch was deleted")
	}
}

// TestDiff: the diff shows the agent's work against the start tree (not
// the user's uncommitted edit of copy time), committed and not, deletions
// included; a conflict is marked; Only and Color do what they say.
func TestDiff(t *testing.T) {
	needGit(t)
	files := map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n", "gone.txt": "g\n", "dirty.txt": "clean\n"}
	_, s := agentSession(t, files, true, func(tree string) {
		committer(t)(tree)
		must(t, os.Remove(filepath.Join(tree, "gone.txt")))
		must(t, os.WriteFile(filepath.Join(tree, "new.txt"), []byte("new\n"), 0o755))
	})
	// The user's edit of c.txt, which the agent changed too.
	must(t, os.WriteFile(filepath.Join(s.Record.Root, "c.txt"), []byte("c by the user\n"), 0o644))
	var out bytes.Buffer
	if err := s.Diff(&out, DiffOptions{}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"diff --git a/a.txt b/a.txt\n", "+a by the agent\n", "+b by the agent\n",
		"# conflict: c.txt changed in the repository too", "-c by the user\n+c by the agent\n",
		"diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n",
		"diff --git a/new.txt b/new.txt\nnew file mode 100755\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the diff lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "dirty") || strings.Contains(got, "\x1b[") {
		t.Errorf("the diff shows dirty.txt, or colours:\n%s", got)
	}
	if i, j := strings.Index(got, "# conflict: c.txt"), strings.Index(got, "diff --git a/c.txt"); i < 0 || j < i || strings.Contains(got[i:j], "diff --git") {
		t.Errorf("the conflict is not marked right before its diff:\n%s", got)
	}

	out.Reset()
	if err := s.Diff(&out, DiffOptions{Only: func(rel string) bool { return rel == "a.txt" }, Color: true}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "\x1b[") || strings.Contains(got, "b.txt") || !strings.Contains(got, "a.txt") {
		t.Errorf("Diff(Only a.txt, Color):\n%q", got)
	}
	out.Reset()
	if err := s.Diff(&out, DiffOptions{Stat: true}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, " 5 files changed, 4 insertions(+), 4 deletions(-)\n") || !strings.HasSuffix(got, "saves the agent's\n") {
		t.Errorf("Diff(Stat):\n%s", got)
	}
}

func TestSelector(t *testing.T) {
	root := "/p"
	for _, tt := range []struct {
		cwd      string
		patterns []string
		match    []string
		miss     []string
		err      string
	}{
		{cwd: "/p", patterns: nil, match: []string{"a", "x/y"}},
		{cwd: "/p", patterns: []string{"src"}, match: []string{"src/a.go", "src/x/b.go"}, miss: []string{"srcs/a.go", "a.go"}},
		{cwd: "/p", patterns: []string{"*.go"}, match: []string{"a.go"}, miss: []string{"src/a.go"}},
		{cwd: "/p", patterns: []string{"**/*.go"}, match: []string{"a.go", "src/x/a.go"}, miss: []string{"a.txt"}},
		{cwd: "/p/src", patterns: []string{"a.go", "../docs/"}, match: []string{"src/a.go", "docs/r.md"}, miss: []string{"a.go"}},
		{cwd: "/p/src", patterns: []string{"."}, match: []string{"src/a.go"}, miss: []string{"a.go"}},
		{cwd: "/elsewhere", patterns: []string{"a.go"}, match: []string{"a.go"}},
		{cwd: "/p", patterns: []string{"/p/src/a.go"}, match: []string{"src/a.go"}},
		{cwd: "/p", patterns: []string{"app/[id].tsx"}, match: []string{"app/[id].tsx", "app/i.tsx"}},
		{cwd: "/p", patterns: []string{"/q/a.go"}, err: "is not inside the project root"},
		{cwd: "/p", patterns: []string{"../a.go"}, err: "is not inside the project root"},
	} {
		sel, err := NewSelector(root, tt.cwd, tt.patterns)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("NewSelector(%s, %q) = %v, want %q", tt.cwd, tt.patterns, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("NewSelector(%s, %q) = %v", tt.cwd, tt.patterns, err)
		}
		for _, p := range tt.match {
			if !sel.Match(p) {
				t.Errorf("NewSelector(%s, %q).Match(%q) = false", tt.cwd, tt.patterns, p)
			}
		}
		for _, p := range tt.miss {
			if sel.Match(p) {
				t.Errorf("NewSelector(%s, %q).Match(%q) = true", tt.cwd, tt.patterns, p)
			}
		}
	}
	sel, _ := NewSelector(root, root, []string{"a/**", "b"})
	sel.Match("a/x")
	if got := sel.Unmatched(); !reflect.DeepEqual(got, []string{"b"}) {
		t.Errorf("Unmatched() = %q, want [b]", got)
	}
}
