package session

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
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
