package mount

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seed-3bc194a6/workforce/internal/gittest"
)

// gitIn runs git in dir for a test (gittest.Run).
var gitIn = gittest.Run

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

// TestSandboxSharesHistory: a repository with a long history costs no more
// to sandbox than one without, by bytes written; git log, diff and commit
// work in the sandbox, and the agent's objects stay there.
func TestSandboxSharesHistory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	sizes := map[int]int64{}
	for _, commits := range []int{0, 64} {
		root := gittest.RepoWithHistory(t, commits)
		s, err := create(context.Background(), Options{Home: t.TempDir(), Persona: "p", Root: root, Cwd: root})
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
	main := gittest.RepoWithHistory(t, 2)
	wt := filepath.Join(t.TempDir(), "wt")
	gitIn(t, main, "worktree", "add", "-q", "-b", "feature", wt)
	realHead := gitIn(t, wt, "rev-parse", "HEAD")
	realIndex, _ := os.ReadFile(filepath.Join(main, ".git", "worktrees", "wt", "index"))
	s, err := create(context.Background(), Options{Home: t.TempDir(), Persona: "p", Root: wt, Cwd: wt})
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

// TestNestedGitIsSealed: every git directory below the project root, by
// any kind of .git (a nested repository, a submodule, a linked worktree of
// a repository outside the project, a .git file naming a git directory of
// the project by an absolute path, a .git symlink, a config naming its
// work tree absolutely), leads git in the sandbox to the sandbox only:
// commits there leave every real git directory byte-identical, and
// nothing below a .git flows back.
func TestNestedGitIsSealed(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	outside := gittest.RepoWithHistory(t, 1)
	root := gittest.RepoWithHistory(t, 1)
	gitIn(t, root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", outside, "sub")
	gitIn(t, root, "commit", "-q", "-m", "submodule")
	gitIn(t, outside, "worktree", "add", "-q", "-b", "feature", filepath.Join(root, "wt"))
	inner := filepath.Join(root, "inner")
	must(t, os.MkdirAll(inner, 0o755))
	gitIn(t, inner, "init", "-q")
	must(t, os.WriteFile(filepath.Join(inner, "a.txt"), []byte("a\n"), 0o644))
	gitIn(t, inner, "add", "-A")
	gitIn(t, inner, "commit", "-q", "-m", "inner")
	gitIn(t, inner, "config", "core.worktree", inner) // absolute
	// A .git file naming the submodule's git directory absolutely, as
	// older git wrote them.
	abs := filepath.Join(root, "abs")
	must(t, os.MkdirAll(abs, 0o755))
	must(t, os.WriteFile(filepath.Join(abs, "b.txt"), []byte("b\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(abs, ".git"), []byte("gitdir: "+filepath.Join(root, ".git", "modules", "sub")+"\n"), 0o644))
	lnk := filepath.Join(root, "lnk")
	must(t, os.MkdirAll(lnk, 0o755))
	must(t, os.Symlink(filepath.Join(inner, ".git"), filepath.Join(lnk, ".git")))

	realGit := []string{filepath.Join(root, ".git"), filepath.Join(inner, ".git"), filepath.Join(outside, ".git")}
	before := gittest.State(t, realGit...)
	s, err := create(context.Background(), Options{Home: t.TempDir(), Persona: "p", Root: root, Cwd: root})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(s.Tree, "sub", ".git")); !strings.Contains(string(got), "gitdir: ../.git/modules/sub") {
		t.Errorf("the submodule's relative .git file was not kept: %q", got)
	}
	if got := strings.TrimSpace(gitIn(t, filepath.Join(s.Tree, "inner"), "config", "core.worktree")); got != filepath.Join(s.Tree, "inner") {
		t.Errorf("inner's core.worktree in the sandbox = %q, want the sandbox's inner", got)
	}
	for _, dir := range []string{"", "sub", "wt", "inner", "abs", "lnk"} {
		d := filepath.Join(s.Tree, dir)
		top := strings.TrimSpace(gitIn(t, d, "rev-parse", "--show-toplevel"))
		if real, _ := filepath.EvalSymlinks(top); !strings.HasPrefix(real+"/", s.Tree+"/") {
			t.Errorf("git in the sandbox's %q works on %s", dir, top)
		}
		gd := strings.TrimSpace(gitIn(t, d, "rev-parse", "--absolute-git-dir"))
		if !strings.HasPrefix(gd+"/", s.Tree+"/") {
			t.Errorf("git in the sandbox's %q uses the git directory %s", dir, gd)
		}
		must(t, os.WriteFile(filepath.Join(d, "agent-"+filepath.Base(d)+".txt"), []byte("agent\n"), 0o644))
		gitIn(t, d, "add", "-A")
		gitIn(t, d, "commit", "-q", "--allow-empty", "-m", "agent in "+dir)
	}
	after := gittest.State(t, realGit...)
	for path, sum := range before {
		if after[path] != sum {
			t.Errorf("git in the sandbox changed the real %s", path)
		}
	}
	for path := range after {
		if _, ok := before[path]; !ok {
			t.Errorf("git in the sandbox created the real %s", path)
		}
	}
	rep, err := s.Sync(context.Background(), SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range append(rep.Created, rep.Updated...) {
		if inGit(rel) {
			t.Errorf("sync-back wrote %s, below a .git", rel)
		}
	}
	if len(rep.Created) != 6 {
		t.Errorf("sync-back created %v, want the agent's 6 files", rep.Created)
	}
	if got := gittest.State(t, realGit...); len(got) != len(after) {
		t.Errorf("sync-back changed the real git directories: %d files, want %d", len(got), len(after))
	}
}

func TestGitInner(t *testing.T) {
	for _, tc := range []struct {
		rel, inner string
		in, dotgit bool
	}{
		{".git", "", false, true},
		{".git/config", "config", true, false},
		{"sub/.git", "", false, true},
		{"sub/.git/objects", "objects", true, false},
		{"a.git/b", "", false, false},
		{"x/foo.git/.git/HEAD", "HEAD", true, false},
		{".github/workflows", "", false, false},
		{"sub/.gitignore", "", false, false},
		{".git/modules/m/.git/x", ".git/modules/m/.git/x"[5:], true, false},
	} {
		inner, in := gitInner(tc.rel)
		if inner != tc.inner || in != tc.in || isDotGit(tc.rel) != tc.dotgit {
			t.Errorf("gitInner(%q) = %q, %v; isDotGit %v; want %q, %v, %v", tc.rel, inner, in, isDotGit(tc.rel), tc.inner, tc.in, tc.dotgit)
		}
	}
}

// TestGitDirLinksAreSealed: a .git directory whose entries are links to
// another clone (the layout git-new-workdir makes) gets copies of what
// they lead to, objects shared: a commit in the sandbox leaves the other
// clone byte-identical.
func TestGitDirLinksAreSealed(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	orig := gittest.RepoWithHistory(t, 1)
	root := t.TempDir()
	must(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	for _, n := range []string{"refs", "objects", "config", "packed-refs", "info", "hooks", "logs"} {
		if _, err := os.Lstat(filepath.Join(orig, ".git", n)); err == nil {
			must(t, os.Symlink(filepath.Join(orig, ".git", n), filepath.Join(root, ".git", n)))
		}
	}
	head, _ := os.ReadFile(filepath.Join(orig, ".git", "HEAD"))
	must(t, os.WriteFile(filepath.Join(root, ".git", "HEAD"), head, 0o644))
	gitIn(t, root, "checkout", "-q", "-f", "HEAD")
	before := gittest.State(t, filepath.Join(orig, ".git"))
	s, err := create(context.Background(), Options{Home: t.TempDir(), Persona: "p", Root: root, Cwd: root})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(gitIn(t, s.Tree, "status", "--porcelain")); got != "" {
		t.Errorf("git status in the sandbox: %q, want clean", got)
	}
	must(t, os.WriteFile(filepath.Join(s.Tree, "main.go"), []byte("package main // agent\n"), 0o644))
	gitIn(t, s.Tree, "commit", "-q", "-am", "agent")
	after := gittest.State(t, filepath.Join(orig, ".git"))
	if len(after) != len(before) {
		t.Errorf("git in the sandbox wrote the other clone: %d files, then %d", len(before), len(after))
	}
	for p, sum := range before {
		if after[p] != sum {
			t.Errorf("git in the sandbox changed %s", p)
		}
	}
}

// TestReadHead: HEAD read from the git directory's files is what git
// rev-parse says, in every layout readHead takes on, and the others are
// left to git.
func TestReadHead(t *testing.T) {
	n := 0
	commit := func(dir string) {
		n++
		os.WriteFile(filepath.Join(dir, "f"), []byte(fmt.Sprint(n)), 0o644)
		gitIn(t, dir, "add", "-A")
		gitIn(t, dir, "commit", "-q", "-m", "c")
	}
	tests := []struct {
		name  string
		setup func(dir string)
		ok    bool
	}{
		{"branch, loose ref", func(dir string) { commit(dir) }, true},
		{"branch, packed ref", func(dir string) { commit(dir); gitIn(t, dir, "pack-refs", "--all") }, true},
		{"detached", func(dir string) { commit(dir); commit(dir); gitIn(t, dir, "checkout", "-q", "--detach", "HEAD~1") }, true},
		{"no commit yet", func(dir string) {}, true},
		{"other branch", func(dir string) { commit(dir); gitIn(t, dir, "checkout", "-q", "-b", "topic"); commit(dir) }, true},
		{"symbolic ref to a symbolic ref", func(dir string) {
			commit(dir)
			gitIn(t, dir, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
			gitIn(t, dir, "symbolic-ref", "HEAD", "refs/heads/alias")
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			gitIn(t, dir, "init", "-q", "-b", "main")
			tt.setup(dir)
			want := ""
			if out, err := exec.Command("git", "-C", dir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").Output(); err == nil {
				want = strings.TrimSpace(string(out))
			}
			got, ok, err := readHead(filepath.Join(dir, ".git"))
			if err != nil || ok != tt.ok || ok && got != want {
				t.Errorf("readHead = %q, %v, %v; git says %q, want ok %v", got, ok, err, want, tt.ok)
			}
			s := &Sandbox{Tree: dir}
			if h := s.Head(); h != want {
				t.Errorf("head() = %q, git says %q", h, want)
			}
		})
	}
	if h, ok, err := readHead(t.TempDir()); h != "" || !ok || err != nil {
		t.Errorf("readHead of a directory without HEAD = %q, %v, %v", h, ok, err)
	}
}

// TestReadHeadNotAFile: where git would read HEAD, the branch's ref or
// packed-refs from what is not a regular file (a FIFO would block it), the
// sandbox's HEAD is an error, and git is not asked: ReadHead returns at
// once.
func TestReadHeadNotAFile(t *testing.T) {
	tests := []struct {
		name string
		make func(gitDir string) error
	}{
		{"the branch's ref a FIFO", func(g string) error {
			p := filepath.Join(g, "refs", "heads", "main")
			os.Remove(p)
			return unix.Mkfifo(p, 0o644)
		}},
		{"HEAD a FIFO", func(g string) error {
			p := filepath.Join(g, "HEAD")
			os.Remove(p)
			return unix.Mkfifo(p, 0o644)
		}},
		{"packed-refs a FIFO", func(g string) error {
			os.Remove(filepath.Join(g, "refs", "heads", "main"))
			return unix.Mkfifo(filepath.Join(g, "packed-refs"), 0o644)
		}},
		{"the branch's ref a link to a FIFO", func(g string) error {
			p := filepath.Join(g, "refs", "heads", "main")
			os.Remove(p)
			if err := unix.Mkfifo(filepath.Join(g, "fifo"), 0o644); err != nil {
				return err
			}
			return os.Symlink(filepath.Join(g, "fifo"), p)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			gitIn(t, dir, "init", "-q", "-b", "main")
			gitIn(t, dir, "commit", "-q", "--allow-empty", "-m", "c")
			must(t, tt.make(filepath.Join(dir, ".git")))
			done := make(chan struct{})
			var h string
			var err error
			go func() {
				defer close(done)
				h, err = (&Sandbox{Tree: dir}).ReadHead()
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				// Unblock git, if it was asked.
				if f, err := os.OpenFile(filepath.Join(dir, ".git", "refs", "heads", "main"), os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
				t.Fatal("ReadHead blocked")
			}
			if h != "" || err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("ReadHead = %q, %v; want an error saying what is not a regular file", h, err)
			}
		})
	}
}

// TestGitDirOfTheCallerIsIgnored: with GIT_DIR set in workforce's
// environment (a git hook runs with it), the git the sandbox runs still
// works on the sandbox's own repository: the real index keeps no mark of
// the files the sandbox hides.
func TestGitDirOfTheCallerIsIgnored(t *testing.T) {
	root := t.TempDir()
	gitIn(t, root, "init", "-q", "-b", "main")
	must(t, os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("the repository's\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644))
	gitIn(t, root, "add", "-A")
	gitIn(t, root, "commit", "-q", "-m", "c")
	t.Setenv("GIT_DIR", filepath.Join(root, ".git"))
	t.Setenv("GIT_WORK_TREE", root)
	s, err := create(context.Background(), Options{Home: t.TempDir(), Persona: "p", Root: root, Cwd: root, Hide: []string{"AGENTS.md"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Remove()
	cmd := exec.Command("git", "ls-files", "-v")
	cmd.Dir = root
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "S AGENTS.md") {
		t.Errorf("the real index marks AGENTS.md skip-worktree:\n%s", out)
	}
	sb := exec.Command("git", "ls-files", "-v")
	sb.Dir = s.Tree
	sb.Env = cmd.Env
	if out, err := sb.Output(); err != nil || !strings.Contains(string(out), "S AGENTS.md") {
		t.Errorf("the sandbox's index does not mark AGENTS.md skip-worktree: %v\n%s", err, out)
	}
}

// TestGitDirUnderAnotherName: a git directory of the project under another
// name than .git, which the root's .git file names (the bare-repository
// layout, by a relative path; --separate-git-dir, by an absolute one) or a
// nested .git file names (found as the copy meets it), is a git directory
// as .git is: not in the manifest, its objects shared (when known before
// the copy), what the agent writes there never synced nor listed, the
// sandbox's HEAD read through it, and the sandbox's state keeps it.
func TestGitDirUnderAnotherName(t *testing.T) {
	layouts := []struct {
		name   string
		dir    string // the git directory under another name
		setup  func(t *testing.T, root string)
		shared bool // its objects are shared, not copied (a nested .git's found late are copied)
	}{
		{"bare layout", ".bare", func(t *testing.T, root string) {
			gitIn(t, root, "init", "-q", "--bare", "-b", "main", ".bare")
			must(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: ./.bare\n"), 0o644))
			gitIn(t, root, "config", "core.bare", "false")
			gitIn(t, root, "add", "notes.txt")
			gitIn(t, root, "commit", "-q", "-m", "start")
		}, true},
		{"separate git directory", "gitdata", func(t *testing.T, root string) {
			gitIn(t, root, "init", "-q", "-b", "main", "--separate-git-dir="+filepath.Join(root, "gitdata"), ".")
			gitIn(t, root, "add", "notes.txt")
			gitIn(t, root, "commit", "-q", "-m", "start")
		}, true},
		{"named by a nested .git", "vendor/.libgit", func(t *testing.T, root string) {
			gitIn(t, root, "init", "-q", "-b", "main")
			lib := filepath.Join(root, "vendor", "lib")
			must(t, os.MkdirAll(lib, 0o755))
			gitIn(t, filepath.Dir(lib), "init", "-q", "--bare", "-b", "main", ".libgit")
			must(t, os.WriteFile(filepath.Join(lib, ".git"), []byte("gitdir: ../.libgit\n"), 0o644))
			gitIn(t, lib, "config", "core.bare", "false")
			must(t, os.WriteFile(filepath.Join(lib, "l.txt"), []byte("l\n"), 0o644))
			gitIn(t, lib, "add", "l.txt")
			gitIn(t, lib, "commit", "-q", "-m", "lib")
			gitIn(t, root, "add", "notes.txt")
			gitIn(t, root, "commit", "-q", "-m", "start")
		}, false},
	}
	for _, tt := range layouts {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			must(t, os.WriteFile(filepath.Join(root, "notes.txt"), []byte("notes\n"), 0o644))
			tt.setup(t, root)
			head := strings.TrimSpace(gitIn(t, root, "rev-parse", "HEAD"))
			// One worker: the copy meets vendor/.libgit before the
			// vendor/lib/.git that names it.
			s, err := create(context.Background(), Options{Home: t.TempDir(), Persona: "p", Root: root, Cwd: root, Workers: 1})
			must(t, err)
			defer s.Remove()
			for rel := range s.realFiles() {
				if strings.HasPrefix(rel, tt.dir+"/") {
					t.Errorf("the manifest has %s", rel)
				}
			}
			for _, d := range s.dirs {
				if d == tt.dir || strings.HasPrefix(d, tt.dir+"/") {
					t.Errorf("the copy's directories have %s", d)
				}
			}
			if !InGitDir(root, tt.dir+"/config") && tt.dir != "vendor/.libgit" {
				t.Errorf("InGitDir(%s/config) is false", tt.dir)
			}
			if tt.dir != "vendor/.libgit" {
				p, err := PlanFor(Options{Home: t.TempDir(), Persona: "p", Root: root, Cwd: root, Ignore: []string{"*.sample"}})
				must(t, err)
				for _, rel := range p.Ignored {
					if strings.HasPrefix(rel, tt.dir+"/") {
						t.Errorf("the plan lists %s as ignored", rel)
					}
				}
			}
			alt, err := os.ReadFile(filepath.Join(s.Tree, tt.dir, "objects", "info", "alternates"))
			if (err == nil) != tt.shared {
				t.Errorf("objects shared = %v (%v), want %v", err == nil, err, tt.shared)
			}
			if tt.shared && strings.TrimSpace(string(alt)) != filepath.Join(root, tt.dir, "objects") {
				t.Errorf("alternates = %q", alt)
			}
			if tt.dir != "vendor/.libgit" {
				if h := s.Head(); h != head || s.GitStart() != head {
					t.Errorf("Head = %q, GitStart = %q, want %s", h, s.GitStart(), head)
				}
				if got := s.GitObjects(); got != filepath.Join(s.Tree, tt.dir, "objects") {
					t.Errorf("GitObjects = %q", got)
				}
			}
			// The agent writes the git directory, and a file.
			cfg := filepath.Join(s.Tree, tt.dir, "config")
			must(t, os.WriteFile(cfg, []byte("[core]\n\tfsmonitor = touch /nonexistent/marker\n"), 0o644))
			write(t, filepath.Join(s.Tree, tt.dir, "refs", "heads", "main"), strings.Repeat("0", 40)+"\n")
			write(t, filepath.Join(s.Tree, tt.dir, "new-file"), "x\n")
			write(t, filepath.Join(s.Tree, "notes.txt"), "notes by the agent\n")
			must(t, s.Save())
			for _, reopen := range []bool{false, true} {
				box := s
				if reopen {
					box, err = Open(s.Dir)
					must(t, err)
				}
				r, err := box.Sync(context.Background(), SyncOptions{Deletes: true, DryRun: true})
				must(t, err)
				all := append(append(append([]string{}, r.Created...), r.Updated...), r.NotSynced...)
				if !slices.Equal(r.Updated, []string{"notes.txt"}) || len(r.Created)+len(r.Deleted)+len(r.Conflicts)+len(r.NotSynced) != 0 {
					t.Errorf("reopened %v: report %v, %+v", reopen, all, r)
				}
			}
			r, err := s.Sync(context.Background(), SyncOptions{Deletes: true})
			must(t, err)
			if !slices.Equal(r.Updated, []string{"notes.txt"}) || len(r.Created) != 0 {
				t.Errorf("sync: %+v", r)
			}
			if data, _ := os.ReadFile(filepath.Join(root, tt.dir, "config")); strings.Contains(string(data), "fsmonitor") {
				t.Errorf("the real %s/config was written:\n%s", tt.dir, data)
			}
			if _, err := os.Lstat(filepath.Join(root, tt.dir, "new-file")); err == nil {
				t.Errorf("%s/new-file reached the real tree", tt.dir)
			}
		})
	}
}
