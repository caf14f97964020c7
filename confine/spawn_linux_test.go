package confine

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpawnOverlayLater: a launcher Spawn started before the session's
// directories exist is launched once they do, into a directory that
// exists only in the overlay it mounts: the program runs there and sees
// the project through it.
func TestSpawnOverlayLater(t *testing.T) {
	needOverlay(t)
	o, tmp := overlaySession(t, map[string]string{"sub/f": "from the project\n"})
	// The session's directories come after the launcher's start.
	session := filepath.Dir(o.Upper)
	if err := os.RemoveAll(session); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", "cat f > copied")
	cmd.Dir = "/"
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	p := overlayPolicy(o, tmp)
	pending, err := Spawn(cmd, p.Shape())
	if err != nil {
		t.Fatal(err)
	}
	defer pending.Abort()
	for _, d := range []string{o.Upper, o.Work, o.Target, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l, err := pending.Launch(p, filepath.Join(o.Target, "sub"), []string{"PATH=/usr/bin:/bin"})
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the program: %v, %s", err, stderr.String())
	}
	if e, err := l.Ending(); err != nil || e == nil || e.Code != 0 {
		t.Errorf("Ending() = %+v, %v; want code 0", e, err)
	}
	l.Close()
	b, err := os.ReadFile(filepath.Join(o.Upper, "sub", "copied"))
	if err != nil || string(b) != "from the project\n" {
		t.Errorf("the upper layer's sub/copied: %q, %v; want the project's sub/f, copied in the overlay's sub", b, err)
	}
}

// TestSpawnAbort: a launcher that is never launched is ended and reaped
// by Abort, runs nothing, and says nothing.
func TestSpawnAbort(t *testing.T) {
	needNamespaces(t)
	marker := filepath.Join(t.TempDir(), "ran")
	for _, s := range []Shape{{}, {Namespaces: true}} {
		cmd := exec.Command("/bin/sh", "-c", "echo ran > "+marker)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		pending, err := Spawn(cmd, s)
		if err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		pending.Abort()
		pending.Abort() // twice: nothing more
		if cmd.ProcessState == nil {
			t.Errorf("%+v: the launcher was not reaped", s)
		}
		if stderr.Len() > 0 {
			t.Errorf("%+v: the launcher said %q", s, stderr.String())
		}
		if _, err := pending.Launch(Policy{}, "", nil); err == nil {
			t.Errorf("%+v: Launch after Abort succeeded", s)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the program ran")
	}
}

// TestSpawnShape: a policy of another shape than the launcher was
// started for is refused, and the launcher ended; so is an overlay
// without namespaces.
func TestSpawnShape(t *testing.T) {
	needNamespaces(t)
	if _, err := Spawn(exec.Command("/bin/true"), Shape{Overlay: true}); err == nil {
		t.Error("Spawn of an overlay without namespaces succeeded")
	}
	dir := t.TempDir()
	cmd := exec.Command("/bin/true")
	pending, err := Spawn(cmd, Shape{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = pending.Launch(Policy{Dirs: []string{dir}, Net: &Namespaces{}}, "", nil)
	if err == nil || !strings.Contains(err.Error(), "shape") {
		t.Errorf("Launch with namespaces of a launcher started without: %v, want the shapes' error", err)
	}
	if cmd.ProcessState == nil {
		t.Error("the launcher was not reaped")
	}
}
