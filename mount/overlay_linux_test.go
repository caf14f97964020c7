package mount

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/internal/git"
)

// kernelSandbox makes a project and an overlay sandbox of it, outside
// the system's temporary directory (as a user's files are: the harness's
// /tmp is the session's), and the policy of a harness shown it: the
// sandbox, the policy, the project and the harness's /tmp. It skips the
// test where this system has no overlay.
func kernelSandbox(t *testing.T) (*Sandbox, confine.Policy, string, string) {
	t.Helper()
	if ok, reason := confine.OverlayAvailable(""); !ok {
		t.Skipf("no overlay here: %s", reason)
	}
	base := "/var/tmp"
	if fi, err := os.Stat(base); err != nil || !fi.IsDir() {
		base = os.TempDir()
	}
	dir, err := os.MkdirTemp(base, "overlay-sync-")
	must(t, err)
	t.Cleanup(func() { _ = RemoveDir(dir) })
	root := filepath.Join(dir, "project")
	writeTree(t, root, map[string]string{
		"a.txt": "a", "b.txt": "b", "sub/c.txt": "c", "gone/x.txt": "x", "gone/in/y.txt": "y",
		".agentignore": ".env\n", ".env": "SECRET=1", "sub/AGENTS.md": "real",
	})
	s, err := Create(context.Background(), Options{Home: filepath.Join(dir, "home"), Persona: "p", Root: root,
		Cwd: filepath.Join(root, "sub"), Hide: []string{"AGENTS.md"}, Dir: filepath.Join(dir, "session"), Overlay: true})
	must(t, err)
	t.Cleanup(func() { must(t, s.Remove()) })
	_, err = s.Materialize("AGENTS.md", "persona")
	must(t, err)
	tmp := filepath.Join(dir, "tmp")
	must(t, os.Mkdir(tmp, 0o700))
	ov := &confine.Overlay{Lower: s.Root, Upper: s.Overlay.Upper, Work: s.Overlay.Work, Target: s.Tree, Whiteouts: s.Overlay.Whiteouts}
	p := confine.Policy{Dirs: []string{s.Tree, tmp}, Devices: confine.TerminalDevices,
		Read: &confine.ReadPolicy{Deny: []string{root}}, Net: &confine.Namespaces{Tmp: tmp, Overlay: ov}}
	return s, p, root, tmp
}

// TestOverlayKernel: a shell started by confine's launcher, shown a
// Create'd overlay sandbox of a real tree, edits, creates, deletes and
// renames a directory of the project with mv; Sync brings all of it to
// the real tree (the renamed directory as the new one created and the
// old one deleted, with deletions), and the ignored file and the hidden
// instruction file stay unseen and untouched.
func TestOverlayKernel(t *testing.T) {
	s, p, root, _ := kernelSandbox(t)
	script := `set -e
echo A > ../a.txt
echo n > ../new.txt
rm ../b.txt
mv ../gone ../moved
cat AGENTS.md > seen.txt
if cat ../.env 2>/dev/null; then echo the ignored file is visible >&2; exit 1; fi
`
	runInOverlay(t, s, p, script)
	r, err := s.Sync(context.Background(), SyncOptions{Deletes: true})
	must(t, err)
	want := "created: moved/in/y.txt moved/x.txt new.txt sub/seen.txt\nupdated: a.txt\ndeleted: b.txt gone/in/y.txt gone/x.txt\n"
	if got := summary(r); got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
	for rel, want := range map[string]string{"a.txt": "A\n", "new.txt": "n\n", "moved/x.txt": "x", "moved/in/y.txt": "y",
		"sub/seen.txt": "persona", ".env": "SECRET=1", "sub/AGENTS.md": "real", "b.txt": "", "gone": ""} {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		switch {
		case want == "" && !os.IsNotExist(err):
			t.Errorf("%s is in the real tree (%v)", rel, err)
		case want != "" && string(data) != want:
			t.Errorf("real %s = %q (%v), want %q", rel, data, err, want)
		}
	}
}

// TestOverlayGit: git commits in an overlay sandbox land in the upper
// layer, and workforce reads them from outside, with no namespace: the
// new HEAD (ReadHead), the commit as made there (CommittedInSandbox) and
// its objects in the agent's store (GitObjects); the real repository is
// untouched.
func TestOverlayGit(t *testing.T) {
	if ok, reason := confine.OverlayAvailable(""); !ok {
		t.Skipf("no overlay here: %s", reason)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir, err := os.MkdirTemp("/var/tmp", "overlay-git-")
	if err != nil {
		dir = t.TempDir()
	}
	t.Cleanup(func() { _ = RemoveDir(dir) })
	root := filepath.Join(dir, "project")
	writeTree(t, root, map[string]string{"a.txt": "a", "AGENTS.md": "real", "secret.txt": "s", ".agentignore": "secret.txt\n"})
	gitEnv := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-qm", "start"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = root, gitEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	s, err := Create(context.Background(), Options{Home: filepath.Join(dir, "home"), Persona: "p", Root: root,
		Cwd: root, Dir: filepath.Join(dir, "session"), Overlay: true, Hide: []string{"AGENTS.md"}})
	must(t, err)
	defer func() { must(t, s.Remove()) }()
	_, err = s.Materialize("AGENTS.md", "persona")
	must(t, err)
	realIndex, err := os.ReadFile(filepath.Join(root, ".git", "index"))
	must(t, err)
	start := s.GitStart()
	if start == "" {
		t.Fatal("no start commit")
	}
	tmp := filepath.Join(dir, "tmp")
	must(t, os.Mkdir(tmp, 0o700))
	ov := &confine.Overlay{Lower: s.Root, Upper: s.Overlay.Upper, Work: s.Overlay.Work, Target: s.Tree, Whiteouts: s.Overlay.Whiteouts}
	p := confine.Policy{Dirs: []string{s.Tree, tmp}, Devices: confine.TerminalDevices,
		Read: &confine.ReadPolicy{Deny: []string{root}}, Net: &confine.Namespaces{Tmp: tmp, Overlay: ov}}
	cmd := exec.Command("/bin/sh", "-c", `set -e
st=$(git status --porcelain)
if [ -n "$st" ]; then echo "git status: $st" >&2; exit 1; fi
echo A > a.txt; git commit -qam agent; git rev-parse HEAD`)
	cmd.Dir, cmd.Env = s.Workdir, append(gitEnv, "HOME="+tmp)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	l, err := confine.Start(cmd, p)
	must(t, err)
	err = cmd.Wait()
	l.Close()
	if err != nil {
		t.Fatalf("the shell: %v\n%s", err, stderr.String())
	}
	made := strings.TrimSpace(stdout.String())
	head, err := s.ReadHead()
	must(t, err)
	if head != made || head == start {
		t.Errorf("ReadHead = %s, want the agent's commit %s (start %s)", head, made, start)
	}
	if !s.CommittedInSandbox()[made] {
		t.Errorf("CommittedInSandbox has not %s: %v", made, s.CommittedInSandbox())
	}
	stored, err := git.StoredIn(s.GitObjects(), []string{made, start})
	must(t, err)
	if !stored[made] || stored[start] {
		t.Errorf("GitObjects %s holds %v, want the agent's commit only", s.GitObjects(), stored)
	}
	// The agent's commits, outside: the real git directory, the agent's
	// store first and the real one as its alternate.
	rl := exec.Command("git", "rev-list", made, "^"+start, "--")
	rl.Env = append(gitEnv, "GIT_DIR="+filepath.Join(root, ".git"), "GIT_OBJECT_DIRECTORY="+s.GitObjects(),
		"GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(root, ".git", "objects"))
	if out, err := rl.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != made {
		t.Errorf("git rev-list over the agent's store: %q (%v), want %s", out, err, made)
	}
	if data, _ := os.ReadFile(filepath.Join(root, ".git", "index")); !bytes.Equal(data, realIndex) {
		t.Error("the real index changed")
	}
	if real := (&Sandbox{Tree: root, Root: root}).Head(); real != start {
		t.Errorf("the real HEAD moved: %s", real)
	}
}

// TestOverlayKernelConflict: the user edits, and deletes, while the
// harness runs, files the agent edited: sync-back keeps the user's
// version (and deletion), reports the conflicts and saves the agent's;
// the agent's other edit syncs.
func TestOverlayKernelConflict(t *testing.T) {
	s, p, root, tmp := kernelSandbox(t)
	script := `set -e
echo agent > c.txt
echo agent > ../a.txt
echo agent > ../b.txt
touch /tmp/edited
i=0
while [ ! -e /tmp/go ]; do i=$((i+1)); [ $i -lt 3000 ] || exit 3; sleep 0.01; done
`
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = s.Workdir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	l, err := confine.Start(cmd, p)
	must(t, err)
	defer l.Close()
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(tmp, "edited")); err == nil {
			break
		}
		if i == 3000 {
			t.Fatal("the shell did not edit")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // past the file system's coarse clock
	write(t, filepath.Join(root, "sub", "c.txt"), "user")
	must(t, os.Remove(filepath.Join(root, "b.txt")))
	write(t, filepath.Join(tmp, "go"), "")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the shell: %v\n%s", err, stderr.String())
	}
	r, err := s.Sync(context.Background(), SyncOptions{})
	must(t, err)
	if got, want := summary(r), "updated: a.txt\nconflicts: b.txt sub/c.txt\n"; got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "sub", "c.txt")); string(data) != "user" {
		t.Errorf("real sub/c.txt = %q, want the user's", data)
	}
	if _, err := os.Lstat(filepath.Join(root, "b.txt")); err == nil {
		t.Error("b.txt, which the user deleted, is back")
	}
	for _, c := range r.Conflicts {
		if data, _ := os.ReadFile(c.Saved); string(data) != "agent\n" {
			t.Errorf("the agent's %s saved as %q", c.Path, data)
		}
	}
}
