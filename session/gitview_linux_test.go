package session

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/seed-3bc194a6/workforce/mount"
)

// TestCopyMerged: the upper layer's refs go over the real ones, a
// whiteout drops the real one, a FIFO stays a FIFO, never read.
func TestCopyMerged(t *testing.T) {
	real, upper, dst := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "refs")
	mustWrite(t, filepath.Join(real, "heads/main"), "r-main")
	mustWrite(t, filepath.Join(real, "heads/old"), "r-old")
	mustWrite(t, filepath.Join(upper, "heads/main"), "u-main")
	mustWrite(t, filepath.Join(upper, "heads/new"), "u-new")
	if err := syscall.Mknod(filepath.Join(upper, "heads/old"), syscall.S_IFCHR, 0); err != nil {
		t.Skipf("cannot make a whiteout here: %v", err)
	}
	if err := syscall.Mkfifo(filepath.Join(upper, "heads/fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{real, upper} {
		if err := copyMerged(from, dst); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Lstat(filepath.Join(dst, "heads/fifo")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("heads/fifo = %v, %v, want a FIFO", fi, err)
	}
	for name, want := range map[string]string{"main": "u-main", "new": "u-new", "old": ""} {
		data, err := os.ReadFile(filepath.Join(dst, "heads", name))
		if got := string(data); got != want || (want == "") != (err != nil) {
			t.Errorf("heads/%s = %q, %v, want %q", name, got, err, want)
		}
	}
}

// TestGitViewLinks: an upper layer whose .git (or .git/logs) the agent
// made a link to another directory gives the view nothing of what the
// link leads to: the real repository's files stay.
func TestGitViewLinks(t *testing.T) {
	for _, link := range []string{".git", ".git/logs"} {
		root, upper, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
		mustWrite(t, filepath.Join(root, ".git/HEAD"), "ref: refs/heads/main\n")
		mustWrite(t, filepath.Join(root, ".git/config"), "[core]\n")
		mustWrite(t, filepath.Join(root, ".git/logs/HEAD"), "real log\n")
		mustWrite(t, filepath.Join(elsewhere, "config"), "[secret]\n")
		mustWrite(t, filepath.Join(elsewhere, "HEAD"), "secret head\n")
		if err := os.MkdirAll(filepath.Dir(filepath.Join(upper, link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(elsewhere, filepath.Join(upper, link)); err != nil {
			t.Fatal(err)
		}
		box := &mount.Sandbox{Dir: t.TempDir(), Root: root, Overlay: &mount.OverlayLayers{Upper: upper}}
		view, done, err := gitView(box)
		if err != nil {
			t.Fatalf("%s: %v", link, err)
		}
		for name, want := range map[string]string{"config": "[core]\n", "HEAD": "ref: refs/heads/main\n", "logs/HEAD": "real log\n"} {
			if got, err := os.ReadFile(filepath.Join(view.Tree, ".git", name)); string(got) != want {
				t.Errorf("%s a link: the view's %s = %q, %v; want the real %q", link, name, got, err, want)
			}
		}
		done()
	}
}
