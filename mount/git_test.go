package mount

import (
	"context"
	"crypto/rand"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// bytesIn returns the bytes of the regular files below dir: what making
// it wrote.
func bytesIn(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// repoWithHistory makes a repository whose working tree is the same
// whatever commits, but whose history holds commits of 64 KiB of random
// bytes each.
func repoWithHistory(t *testing.T, commits int) string {
	t.Helper()
	root := t.TempDir()
	gitIn(t, root, "init", "-q")
	for i := range commits {
		b := make([]byte, 64<<10)
		rand.Read(b)
		must(t, os.WriteFile(filepath.Join(root, "blob.bin"), b, 0o644))
		gitIn(t, root, "add", "-A")
		gitIn(t, root, "commit", "-q", "-m", fmt.Sprint("commit ", i))
	}
	must(t, os.WriteFile(filepath.Join(root, "blob.bin"), []byte("the same tree\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644))
	gitIn(t, root, "add", "-A")
	gitIn(t, root, "commit", "-q", "-m", "last")
	return root
}

// TestSandboxSharesHistory: a repository with a long history costs no more
// to sandbox than one without, by bytes written; git log, diff and commit
// work in the sandbox, and the agent's objects stay there.
func TestSandboxSharesHistory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	sizes := map[int]int64{}
	for _, commits := range []int{0, 64} {
		root := repoWithHistory(t, commits)
		s, err := Create(context.Background(), Options{Home: t.TempDir(), Persona: "p", Root: root, Cwd: root})
		if err != nil {
			t.Fatal(err)
		}
		sizes[commits] = bytesIn(s.Tree)
		if real := bytesIn(filepath.Join(root, ".git")); commits > 0 && real < 64*64<<10 {
			t.Fatalf("the real history is only %d bytes", real)
		}
		if got := gitIn(t, s.Tree, "log", "--oneline"); strings.Count(got, "\n") != commits+1 {
			t.Errorf("git log in the sandbox shows %d commits, want %d:\n%s", strings.Count(got, "\n"), commits+1, got)
		}
		if got := gitIn(t, s.Tree, "status", "--porcelain"); got != "" {
			t.Errorf("git status in the sandbox: %q, want clean", got)
		}
		must(t, os.WriteFile(filepath.Join(s.Tree, "main.go"), []byte("package main // agent\n"), 0o644))
		if got := gitIn(t, s.Tree, "diff", "--stat"); !strings.Contains(got, "main.go") {
			t.Errorf("git diff in the sandbox: %q", got)
		}
		gitIn(t, s.Tree, "commit", "-q", "-am", "agent")
		head := strings.TrimSpace(gitIn(t, s.Tree, "rev-parse", "HEAD"))
		if out, err := exec.Command("git", "-C", root, "cat-file", "-e", head).CombinedOutput(); err == nil {
			t.Errorf("the agent's commit %s reached the real repository's objects (%s)", head, out)
		}
	}
	// The same tree, with or without 4 MiB of history: the sandbox's bytes
	// differ by less than one commit's blob.
	if d := sizes[64] - sizes[0]; d < 0 || d > 32<<10 {
		t.Errorf("sandbox bytes: %d without history, %d with 64 commits of 64 KiB; want the same within 32 KiB", sizes[0], sizes[64])
	}
}

// TestSandboxOfLinkedWorktree: a project whose .git is a file (a linked
// worktree) gets a git directory of its own in the sandbox, so that git
// there cannot write the real repository's index, HEAD or refs.
func TestSandboxOfLinkedWorktree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	main := repoWithHistory(t, 2)
	wt := filepath.Join(t.TempDir(), "wt")
	gitIn(t, main, "worktree", "add", "-q", "-b", "feature", wt)
	realHead := gitIn(t, wt, "rev-parse", "HEAD")
	realIndex, _ := os.ReadFile(filepath.Join(main, ".git", "worktrees", "wt", "index"))
	s, err := Create(context.Background(), Options{Home: t.TempDir(), Persona: "p", Root: wt, Cwd: wt})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(s.Tree, ".git")); err != nil || !fi.IsDir() {
		t.Fatalf("the sandbox's .git is not a directory: %v", err)
	}
	if got := gitIn(t, s.Tree, "status", "--porcelain"); got != "" {
		t.Errorf("git status in the sandbox: %q, want clean", got)
	}
	if got := gitIn(t, s.Tree, "rev-parse", "--abbrev-ref", "HEAD"); strings.TrimSpace(got) != "feature" {
		t.Errorf("the sandbox is on %q, want feature", got)
	}
	must(t, os.WriteFile(filepath.Join(s.Tree, "new.txt"), []byte("agent\n"), 0o644))
	gitIn(t, s.Tree, "add", "new.txt")
	gitIn(t, s.Tree, "commit", "-q", "-m", "agent")
	if got := gitIn(t, wt, "rev-parse", "HEAD"); got != realHead {
		t.Errorf("the real worktree's HEAD moved to %s", got)
	}
	if idx, _ := os.ReadFile(filepath.Join(main, ".git", "worktrees", "wt", "index")); string(idx) != string(realIndex) {
		t.Error("the real worktree's index was written")
	}
	if got := gitIn(t, main, "branch", "--list"); strings.Count(got, "\n") != 2 {
		t.Errorf("the real repository's branches changed:\n%s", got)
	}
}
