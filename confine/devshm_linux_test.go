package confine

import (
	"os"
	"path/filepath"
	"testing"
)

// shmDir makes a directory in /dev/shm for the test's time, and a file
// beside it that the harness must not see, or skips the test where the
// system has no /dev/shm.
func shmDir(t *testing.T) (dir, other string) {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err != nil || !fi.IsDir() {
		t.Skip("no /dev/shm here")
	}
	dir, err := os.MkdirTemp("/dev/shm", "confine-test-")
	if err != nil {
		t.Skipf("cannot write /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	other = dir + "-other.txt"
	writeFile(t, other, "other\n")
	t.Cleanup(func() { os.Remove(other) })
	return dir, other
}

// TestNamespacesDevShm runs the probe with its working directory, a
// writable directory and the session's tmp in a directory of /dev/shm,
// as a workforce home or a project there has them: they are reachable at
// their own paths inside the harness's fresh /dev, its writes land
// there, and another file of the real /dev/shm stays out of sight.
func TestNamespacesDevShm(t *testing.T) {
	needNamespaces(t)
	dir, other := shmDir(t)
	wd, out, tmp := filepath.Join(dir, "tree"), filepath.Join(dir, "out"), filepath.Join(dir, "session", "tmp")
	for _, d := range []string{wd, out, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := Policy{Dirs: []string{wd, out, tmp}, Devices: TerminalDevices, Net: &Namespaces{Tmp: tmp}}
	got := probeIn(t, wd, p, []string{"write", "rel.txt"}, []string{"write", filepath.Join(out, "o.txt")},
		[]string{"write", "/tmp/t.txt"}, []string{"lstat", other})
	want := []string{"OK", "OK", "OK", "ENOENT"}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("operation %d: %s, want %s", i, got[i], w)
		}
	}
	for _, path := range []string{filepath.Join(wd, "rel.txt"), filepath.Join(out, "o.txt"), filepath.Join(tmp, "t.txt")} {
		if _, err := os.Stat(path); err != nil {
			t.Errorf("the harness's write: %v", err)
		}
	}
}

// TestOverlayDevShm runs the probe shown a project through an overlay
// whose project, layers, target and tmp are in a directory of /dev/shm:
// it sees the project at the target, its writes land in the upper layer,
// and another file of the real /dev/shm stays out of sight.
func TestOverlayDevShm(t *testing.T) {
	needOverlay(t)
	dir, other := shmDir(t)
	o, tmp := overlaySessionIn(t, dir, map[string]string{"a.txt": "a\n"})
	got := probeIn(t, o.Target, overlayPolicy(o, tmp), []string{"read", "a.txt"}, []string{"write", "new.txt"},
		[]string{"write", "/tmp/t.txt"}, []string{"lstat", other})
	want := []string{"OK", "OK", "OK", "ENOENT"}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("operation %d: %s, want %s", i, got[i], w)
		}
	}
	for _, path := range []string{filepath.Join(o.Upper, "new.txt"), filepath.Join(tmp, "t.txt")} {
		if _, err := os.Stat(path); err != nil {
			t.Errorf("the harness's write: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(o.Lower, "new.txt")); err == nil {
		t.Errorf("the harness wrote the real project")
	}
}
