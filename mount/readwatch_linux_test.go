package mount

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/seed-3bc194a6/workforce/confine"
)

// runInOverlay runs the shell script in the overlay sandbox s's working
// directory, through confine's launcher with the policy p, and fails the
// test when it fails.
func runInOverlay(t *testing.T, s *Sandbox, p confine.Policy, script string) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = s.Workdir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	l, err := confine.Start(cmd, p)
	must(t, err)
	err = cmd.Wait()
	l.Close()
	if err != nil {
		t.Fatalf("the shell: %v\n%s", err, stderr.String())
	}
}

// TestOverlayInotifyKernel measures what the read watch stands on: an
// inotify watch on a directory of the lower layer sees the overlay's
// read of one of its files (IN_ACCESS, IN_CLOSE_NOWRITE), the copy-up of
// one the agent appends to (opened and closed unwritten), and no change
// from the agent's writes, which go to the upper layer; and the user's
// change in the real tree (IN_MODIFY, IN_CLOSE_WRITE).
func TestOverlayInotifyKernel(t *testing.T) {
	s, p, root, _ := kernelSandbox(t)
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	must(t, err)
	defer unix.Close(fd)
	_, err = unix.InotifyAddWatch(fd, root, unix.IN_ALL_EVENTS)
	must(t, err)
	runInOverlay(t, s, p, "cat ../a.txt >/dev/null; echo agent >> ../b.txt")
	must(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("user"), 0o644))
	got := map[string][]string{}
	buf := make([]byte, 64<<10)
	n, err := unix.Read(fd, buf)
	must(t, err)
	for b := buf[:n]; len(b) >= unix.SizeofInotifyEvent; {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		name := string(bytes.TrimRight(b[unix.SizeofInotifyEvent:end], "\x00"))
		b = b[end:]
		for _, m := range []struct {
			bit  uint32
			name string
		}{{unix.IN_OPEN, "open"}, {unix.IN_ACCESS, "access"}, {unix.IN_CLOSE_NOWRITE, "close_nowrite"},
			{unix.IN_MODIFY, "modify"}, {unix.IN_CLOSE_WRITE, "close_write"}, {unix.IN_ATTRIB, "attrib"}} {
			if ev.Mask&m.bit != 0 && name != "" && ev.Mask&unix.IN_ISDIR == 0 {
				got[name] = append(got[name], m.name)
			}
		}
	}
	want := map[string]string{
		// The agent's read, then the user's write.
		"a.txt": "open access close_nowrite open modify close_write",
		// The copy-up of the agent's append: read whole, unwritten.
		"b.txt": "open close_nowrite",
	}
	for name, w := range want {
		if g := strings.Join(got[name], " "); g != w {
			t.Errorf("events of %s: %q, want %q", name, g, w)
		}
	}
}

// TestReadWatchKernel: a shell in an overlay sandbox reads a.txt, b.txt
// and sub/c.txt and appends to sub/c.txt; the user had changed b.txt
// before (the agent read the new one), and changes a.txt, sub/c.txt and
// gone/x.txt (never read) after. The watch reports a.txt alone: sub/c.txt
// the agent changed too (sync-back's conflict).
func TestReadWatchKernel(t *testing.T) {
	s, p, root, _ := kernelSandbox(t)
	w := s.WatchReads()
	if w == nil {
		t.Fatal("WatchReads() = nil for an overlay sandbox")
	}
	write := func(rel, data string) {
		t.Helper()
		must(t, os.WriteFile(filepath.Join(root, filepath.FromSlash(rel)), []byte(data), 0o644))
	}
	write("b.txt", "user before")
	runInOverlay(t, s, p, "cat ../a.txt ../b.txt c.txt >/dev/null; echo agent >> c.txt")
	write("a.txt", "user after")
	write("sub/c.txt", "user after")
	write("gone/x.txt", "user after")
	r := w.Stop()
	if want := []string{"a.txt"}; !slices.Equal(r.Changed, want) || r.Incomplete != "" {
		t.Errorf("Stop() = %q (incomplete %q), want %q", r.Changed, r.Incomplete, want)
	}
	if r := w.Stop(); len(r.Changed) != 1 {
		t.Errorf("Stop() again = %q, want the same report", r.Changed)
	}
}
