package session

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/seed-3bc194a6/workforce/mount"
)

// TestAgentFile: the agent's version of a file of an overlay sandbox is
// the upper layer's where it wrote one, none where it deleted it (a
// whiteout there, a file or a whiteout in place of a directory above, an
// opaque directory above), else the real one.
func TestAgentFile(t *testing.T) {
	root, upper := t.TempDir(), t.TempDir()
	for _, f := range []string{"kept.go", "written.go", "gone.go", "gonedir/a.go", "filed/a.go", "replaced/a.go", "deep/in/a.go"} {
		mustWrite(t, filepath.Join(root, f), "real")
	}
	mustWrite(t, filepath.Join(upper, "written.go"), "agent")
	mustWrite(t, filepath.Join(upper, "filed"), "a file where a directory was")
	mustWrite(t, filepath.Join(upper, "replaced/b.go"), "agent")
	mustWrite(t, filepath.Join(upper, "deep/in/other.go"), "agent")
	for _, w := range []string{"gone.go", "gonedir"} {
		if err := syscall.Mknod(filepath.Join(upper, w), syscall.S_IFCHR, 0); err != nil {
			t.Skipf("cannot make a whiteout here: %v", err)
		}
	}
	if err := unix.Setxattr(filepath.Join(upper, "replaced"), "user.overlay.opaque", []byte("y"), 0); err != nil {
		t.Skipf("no user extended attributes here: %v", err)
	}
	box := &mount.Sandbox{Root: root, Tree: t.TempDir(), Overlay: &mount.OverlayLayers{Upper: upper}}
	tests := []struct {
		rel, want string // want "" for none
	}{
		{"kept.go", filepath.Join(root, "kept.go")},
		{"written.go", filepath.Join(upper, "written.go")},
		{"gone.go", ""},
		{"gonedir/a.go", ""},
		{"filed/a.go", ""},
		{"replaced/a.go", ""},
		{"replaced/b.go", filepath.Join(upper, "replaced/b.go")},
		{"deep/in/a.go", filepath.Join(root, "deep/in/a.go")},
	}
	for _, tt := range tests {
		got, ok := agentFile(box, tt.rel)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("agentFile(%q) = %q, %v, want %q", tt.rel, got, ok, tt.want)
		}
	}
	copyBox := &mount.Sandbox{Root: root, Tree: "/t"}
	if got, ok := agentFile(copyBox, "a/b"); got != "/t/a/b" || !ok {
		t.Errorf("agentFile of a copy = %q, %v, want /t/a/b", got, ok)
	}
}

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
