package mount

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCopyLinksNoRealFile: no file of the sandbox is a real file under
// another name (a hard link, which the write sandbox would let the agent
// write through: Landlock checks the path, not the inode), after the copy
// and after a warm refresh. The real tree has a hard-linked pair, a
// read-only file, git's files and objects.
func TestCopyLinksNoRealFile(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	for rel, content := range map[string]string{
		"a.txt": "a", "sub/b.txt": "b", "ro.txt": "read-only", ".agentreadonly": "ro.txt\n", "big.bin": string(make([]byte, 1<<20)),
	} {
		p := filepath.Join(root, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	must(t, os.Link(filepath.Join(root, "a.txt"), filepath.Join(root, "sub", "a-link.txt")))
	if exec.Command("git", "--version").Run() == nil {
		gitIn(t, root, "init", "-q")
		gitIn(t, root, "add", "-A")
		gitIn(t, root, "commit", "-q", "-m", "init")
	}
	real := regularFiles(t, root)
	shares := func(what, tree string) {
		t.Helper()
		box := regularFiles(t, tree)
		for rel, fi := range box {
			for realRel, rfi := range real {
				if os.SameFile(fi, rfi) {
					t.Errorf("%s: the sandbox's %s is the real %s (a hard link)", what, rel, realRel)
				}
			}
		}
		// The work tree's files are all there (git's objects are
		// shared by alternates, not copied).
		for rel := range real {
			if _, ok := box[rel]; !ok && !inGit(filepath.ToSlash(rel)) {
				t.Errorf("%s: the sandbox lacks %s", what, rel)
			}
		}
	}
	o := Options{Home: home, Persona: "p", Root: root, Cwd: root}
	s, err := create(context.Background(), o)
	must(t, err)
	shares("the copy", s.Tree)

	// Parked, and refreshed after the user changed some files.
	if _, err := s.Sync(context.Background(), SyncOptions{Remember: true}); err != nil {
		t.Fatal(err)
	}
	warm := filepath.Join(home, "warm", "tree")
	must(t, s.Park(warm))
	must(t, s.Remove())
	must(t, os.WriteFile(filepath.Join(root, "sub", "b.txt"), []byte("b by the user"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "new.txt"), []byte("new"), 0o644))
	must(t, os.Link(filepath.Join(root, "new.txt"), filepath.Join(root, "new-link.txt")))
	real = regularFiles(t, root)
	o.Warm = warm
	s, err = create(context.Background(), o)
	must(t, err)
	if !s.Reused {
		t.Fatal("the warm sandbox was not used")
	}
	shares("the warm refresh", s.Tree)
}

// regularFiles returns the regular files below dir, by path relative to
// it.
func regularFiles(t *testing.T, dir string) map[string]fs.FileInfo {
	t.Helper()
	out := map[string]fs.FileInfo{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = fi
		return nil
	})
	must(t, err)
	return out
}
