package session

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/seed-3bc194a6/workforce/internal/git"
	"github.com/seed-3bc194a6/workforce/internal/gittest"
	"github.com/seed-3bc194a6/workforce/mount"
)

// newSandbox makes a sandbox of o in a new session directory below
// o.Home, without a session around it.
func newSandbox(t *testing.T, o mount.Options) (*mount.Sandbox, error) {
	t.Helper()
	o.Dir = NewDir(o.Home, o.Persona)
	return mount.Create(context.Background(), o)
}

// TestFetchBranch: the agent's commits come into the real repository as
// one branch, with their messages, authors and dates, and nothing else of
// the real repository changes, also when the user committed meanwhile;
// what the agent left as committed is told apart from its loose work.
func TestFetchBranch(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := gittest.RepoWithHistory(t, 1)
	must(t, os.WriteFile(filepath.Join(root, "c.txt"), []byte("c\n"), 0o644))
	gitIn(t, root, "add", "-A")
	gitIn(t, root, "commit", "-q", "-m", "c")
	s, err := newSandbox(t, mount.Options{Home: t.TempDir(), Persona: "p", Root: root, Cwd: root})
	if err != nil {
		t.Fatal(err)
	}
	start := strings.TrimSpace(gitIn(t, root, "rev-parse", "HEAD"))
	if s.GitStart() != start {
		t.Fatalf("GitStart = %q, want %q", s.GitStart(), start)
	}
	if c, err := agentCommits(s, "workforce/"); c.New != 0 || c.Moved || err != nil {
		t.Fatalf("Commits before the agent = %+v, %v", c, err)
	}
	// The agent: two commits, then a loose edit of a committed file and
	// a new untracked one.
	agent := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=Agent", "-c", "user.email=agent@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = s.Tree
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+s.Tree, "GIT_AUTHOR_DATE=2021-02-03T04:05:06Z", "GIT_COMMITTER_DATE=2021-02-03T04:05:06Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	must(t, os.WriteFile(filepath.Join(s.Tree, "main.go"), []byte("package main // 1\n"), 0o644))
	agent("commit", "-q", "-am", "first by the agent")
	must(t, os.WriteFile(filepath.Join(s.Tree, "new.go"), []byte("package main\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(s.Tree, "c.txt"), []byte("c by the agent\n"), 0o644))
	agent("add", "new.go", "c.txt")
	agent("commit", "-q", "-m", "second by the agent")
	must(t, os.WriteFile(filepath.Join(s.Tree, "c.txt"), []byte("c by the agent, loose\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(s.Tree, "untracked.txt"), []byte("u\n"), 0o644))

	// The user commits meanwhile.
	must(t, os.WriteFile(filepath.Join(root, "user.txt"), []byte("user\n"), 0o644))
	gitIn(t, root, "add", "user.txt")
	gitIn(t, root, "commit", "-q", "-m", "by the user")
	before := gittest.State(t, filepath.Join(root, ".git"))

	if c, err := agentCommits(s, "workforce/"); err != nil || c.New != 2 || c.Moved {
		t.Fatalf("Commits = %+v, %v; want 2 new", c, err)
	}
	if err := fetchBranch(s, "workforce/s1"); err != nil {
		t.Fatal(err)
	}
	if got := gitIn(t, root, "log", "--format=%s|%an|%ad", "--date=iso-strict", "workforce/s1", "^"+start); got != "second by the agent|Agent|2021-02-03T04:05:06+00:00\nfirst by the agent|Agent|2021-02-03T04:05:06+00:00\n" {
		t.Errorf("the branch's commits:\n%s", got)
	}
	after := gittest.State(t, filepath.Join(root, ".git"))
	for path, sum := range before {
		if after[path] != sum && !strings.Contains(path, "/objects/") {
			t.Errorf("exporting changed the real %s", path)
		}
	}
	for path := range after {
		if _, ok := before[path]; !ok && !strings.Contains(path, "/objects/") && !strings.HasSuffix(path, "refs/heads/workforce/s1") {
			t.Errorf("exporting created the real %s", path)
		}
	}
	if err := fetchBranch(s, "workforce/s1"); err != nil {
		t.Errorf("exporting again: %v", err)
	}
	gitIn(t, root, "branch", "-q", "workforce/other", start)
	if err := fetchBranch(s, "workforce/other"); err == nil {
		t.Error("a branch that is not the session's was replaced")
	}
	if err := fetchBranch(s, "-x"); err == nil {
		t.Error("a branch named -x was made")
	}

	got, err := committedOnly(s)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{"main.go": true, "new.go": true}; !reflect.DeepEqual(got, want) {
		t.Errorf("committedOnly = %v, want %v", got, want)
	}
}

// TestCommitsAreTheAgents: agentCommits counts the commits the agent made,
// not those it moved HEAD to that the repository already had (reachable
// there or not, also when the agent copied the object into the sandbox's
// store, or the user fetched it meanwhile); a commit git wrote in the
// sandbox is the agent's, also once an earlier sync brought it in as the
// session's branch, and so is one only a session's branch holds; a HEAD
// at what is no commit is reported as such.
func TestCommitsAreTheAgents(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	commitIn := func(t *testing.T, dir, msg string) string {
		t.Helper()
		gitIn(t, dir, "commit", "-q", "--allow-empty", "-m", msg)
		return strings.TrimSpace(gitIn(t, dir, "rev-parse", "HEAD"))
	}
	write := func(t *testing.T, path, text string) {
		t.Helper()
		must(t, os.WriteFile(path, []byte(text+"\n"), 0o644))
	}
	tests := []struct {
		name     string
		sessions string
		agent    func(t *testing.T, root, tree string)
		new      int
		moved    bool
	}{
		{"nothing", "workforce/", func(t *testing.T, root, tree string) {}, 0, false},
		{"two commits", "workforce/", func(t *testing.T, root, tree string) {
			commitIn(t, tree, "a")
			commitIn(t, tree, "b")
		}, 2, false},
		{"HEAD to a branch of the user's", "workforce/", func(t *testing.T, root, tree string) {
			write(t, filepath.Join(tree, ".git", "HEAD"), "ref: refs/heads/other")
		}, 0, true},
		{"branch back to an ancestor", "workforce/", func(t *testing.T, root, tree string) {
			first := strings.TrimSpace(gitIn(t, root, "rev-parse", "HEAD~1"))
			write(t, filepath.Join(tree, ".git", "refs", "heads", "main"), first)
		}, 0, true},
		{"a commit on top of a branch of the user's", "workforce/", func(t *testing.T, root, tree string) {
			write(t, filepath.Join(tree, ".git", "HEAD"), "ref: refs/heads/other")
			commitIn(t, tree, "on other")
		}, 1, false},
		{"HEAD to an earlier session's branch", "workforce/", func(t *testing.T, root, tree string) {
			write(t, filepath.Join(tree, ".git", "HEAD"), "ref: refs/heads/workforce/earlier")
		}, 1, false},
		{"HEAD to an earlier session's branch, sessions not named", "", func(t *testing.T, root, tree string) {
			write(t, filepath.Join(tree, ".git", "HEAD"), "ref: refs/heads/workforce/earlier")
		}, 0, true},
		{"a commit of the agent's on a branch of the user's since", "workforce/", func(t *testing.T, root, tree string) {
			c := commitIn(t, tree, "mine")
			gitIn(t, root, "fetch", "-q", tree, "HEAD:refs/heads/merged")
			if got := strings.TrimSpace(gitIn(t, root, "rev-parse", "merged")); got != c {
				t.Fatalf("merged = %s, want %s", got, c)
			}
		}, 0, true},
		{"the agent's commits, brought in by an earlier sync", "workforce/", func(t *testing.T, root, tree string) {
			commitIn(t, tree, "a")
			commitIn(t, tree, "b")
			gitIn(t, root, "fetch", "-q", tree, "HEAD:refs/heads/workforce/this")
		}, 2, false},
		{"a branch to a commit only the reflog has (amended away)", "workforce/", func(t *testing.T, root, tree string) {
			write(t, filepath.Join(tree, ".git", "refs", "heads", "main"), lost(t, root))
		}, 0, true},
		{"a commit only the reflog has, copied into the sandbox's store", "workforce/", func(t *testing.T, root, tree string) {
			c := lost(t, root)
			obj := filepath.Join(c[:2], c[2:])
			data, err := os.ReadFile(filepath.Join(root, ".git", "objects", obj))
			must(t, err)
			must(t, os.MkdirAll(filepath.Join(tree, ".git", "objects", c[:2]), 0o755))
			must(t, os.WriteFile(filepath.Join(tree, ".git", "objects", obj), data, 0o444))
			write(t, filepath.Join(tree, ".git", "refs", "heads", "main"), c)
		}, 0, true},
		{"HEAD at a blob", "workforce/", func(t *testing.T, root, tree string) {
			blob := strings.TrimSpace(gitIn(t, root, "hash-object", "-w", "--", ".git/description"))
			write(t, filepath.Join(tree, ".git", "HEAD"), blob)
		}, 0, false},
		{"HEAD at an object no repository has", "workforce/", func(t *testing.T, root, tree string) {
			write(t, filepath.Join(tree, ".git", "HEAD"), strings.Repeat("1", 40))
		}, 0, false},
	}
	notCommit := map[string]string{"HEAD at a blob": "blob", "HEAD at an object no repository has": "missing"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			gitIn(t, root, "init", "-q", "-b", "main")
			commitIn(t, root, "first")
			start := commitIn(t, root, "start")
			gitIn(t, root, "checkout", "-q", "-b", "other")
			commitIn(t, root, "the user's other work")
			gitIn(t, root, "checkout", "-q", "-b", "workforce/earlier", "main")
			commitIn(t, root, "an earlier session's")
			gitIn(t, root, "checkout", "-q", "main")
			s, err := newSandbox(t, mount.Options{Home: t.TempDir(), Persona: "p", Root: root, Cwd: root})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Remove()
			tt.agent(t, root, s.Tree)
			c, err := agentCommits(s, tt.sessions)
			if err != nil {
				t.Fatal(err)
			}
			nc := notCommit[tt.name]
			if c.New != tt.new || c.Moved != tt.moved || c.NotCommit != nc || c.Head == "" || (c.Head == start) != (tt.new == 0 && !tt.moved && nc == "") {
				t.Errorf("agentCommits(%q) = %+v, want %d new, moved %v, not a commit %q (start %s)", tt.sessions, c, tt.new, tt.moved, nc, start)
			}
		})
	}
}

// lost makes in the real repository at root a commit that no ref reaches
// (as one amended away, which only the reflog names), and returns it.
func lost(t *testing.T, root string) string {
	t.Helper()
	return strings.TrimSpace(gitIn(t, root, "commit-tree", "-p", "HEAD", "-m", "amended away", "HEAD^{tree}"))
}

// TestAsCommitted: a file is as a commit holds it when its bytes, its
// kind and its executable bit are the commit's; a FIFO is not opened.
func TestAsCommitted(t *testing.T) {
	dir := t.TempDir()
	blob := func(text string) string {
		name, err := git.BlobName(strings.Repeat("0", 40), strings.NewReader(text), int64(len(text)))
		must(t, err)
		return name
	}
	must(t, os.WriteFile(filepath.Join(dir, "f"), []byte("text\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "x"), []byte("#!/bin/sh\n"), 0o755))
	must(t, os.Symlink("f", filepath.Join(dir, "l")))
	must(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	tests := []struct {
		path, mode, name string
		want             bool
	}{
		{"f", "100644", blob("text\n"), true},
		{"f", "100644", blob("other\n"), false},
		{"f", "100755", blob("text\n"), false},
		{"x", "100755", blob("#!/bin/sh\n"), true},
		{"x", "100644", blob("#!/bin/sh\n"), false},
		{"l", "120000", blob("f"), true},
		{"l", "120000", blob("g"), false},
		{"l", "100644", blob("f"), false},
		{"f", "120000", blob("text\n"), false},
		{"gone", "000000", strings.Repeat("0", 40), true},
		{"f", "000000", strings.Repeat("0", 40), false},
		{"f/below", "000000", strings.Repeat("0", 40), true},
		{"gone", "100644", blob(""), false},
		{"fifo", "100644", blob(""), false},
		{"f", "160000", strings.Repeat("1", 40), true},
	}
	for _, tt := range tests {
		got, err := asCommitted(filepath.Join(dir, tt.path), tt.mode, tt.name)
		if err != nil || got != tt.want {
			t.Errorf("asCommitted(%s, %s) = %v, %v; want %v", tt.path, tt.mode, got, err, tt.want)
		}
	}
}

// TestSyncLeavesCommittedToTheBranch: with OnBranch, what the agent
// committed and left as committed stays out of the working tree (it is on
// the branch), and its loose work syncs back as ever.
func TestSyncLeavesCommittedToTheBranch(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := gittest.RepoWithHistory(t, 1)
	must(t, os.WriteFile(filepath.Join(root, "gone.txt"), []byte("g\n"), 0o644))
	gitIn(t, root, "add", "-A")
	gitIn(t, root, "commit", "-q", "-m", "gone")
	s, err := newSandbox(t, mount.Options{Home: t.TempDir(), Persona: "p", Root: root, Cwd: root})
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(s.Tree, "main.go"), []byte("package main // agent\n"), 0o644))
	must(t, os.Remove(filepath.Join(s.Tree, "gone.txt")))
	gitIn(t, s.Tree, "commit", "-q", "-am", "agent")
	must(t, os.WriteFile(filepath.Join(s.Tree, "loose.txt"), []byte("loose\n"), 0o644))
	on, err := committedOnly(s)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Sync(context.Background(), mount.SyncOptions{Deletes: true, OnBranch: on})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep.OnBranch, []string{"gone.txt", "main.go"}) || !reflect.DeepEqual(rep.Created, []string{"loose.txt"}) || len(rep.Updated)+len(rep.Deleted) != 0 {
		t.Errorf("report: %+v", rep)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "main.go")); string(got) != "package main\n" {
		t.Errorf("main.go was synced as a loose change: %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, "gone.txt")); err != nil {
		t.Error("gone.txt was deleted from the working tree")
	}
}
