package mount

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
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
// change in the real tree (IN_MODIFY, IN_CLOSE_WRITE), in the order they
// came: the order is what the watch judges by.
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
	watchNow(t)
	w := s.WatchReads()
	if w == nil {
		t.Fatal("WatchReads() = nil for an overlay sandbox")
	}
	w.Begin() // every directory watched, gone/in too
	<-w.set
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

// watchNow makes the watch's goroutine watch the directories left as
// soon as the harness started (Begin), for the test's time.
func watchNow(t testing.TB) {
	orig := watchLater
	watchLater = 0
	t.Cleanup(func() { watchLater = orig })
}

// watchedTree makes a tree of n directories below root, d0 to d<n-1>, with
// a file f.txt in each, and a Sandbox whose overlay shows them (no
// overlay is mounted: the test's own reads stand in for the agent's).
func watchedTree(t *testing.T, n int) (*Sandbox, string) {
	t.Helper()
	root, upper := t.TempDir(), t.TempDir()
	dirs := []string{""}
	for i := range n {
		d := fmt.Sprintf("d%d", i)
		must(t, os.Mkdir(filepath.Join(root, d), 0o755))
		must(t, os.WriteFile(filepath.Join(root, d, "f.txt"), []byte("f"), 0o644))
		dirs = append(dirs, d)
	}
	return &Sandbox{Root: root, Overlay: &OverlayLayers{Upper: upper, dirs: dirs}}, root
}

// TestReadWatchBeyondSync: the directories past the first syncWatches are
// watched on the watch's goroutine: a read and a change in the last one
// are reported once it has set them all.
func TestReadWatchBeyondSync(t *testing.T) {
	s, root := watchedTree(t, syncWatches+50)
	w := s.WatchReads()
	w.Begin()
	<-w.set
	last := filepath.Join(root, fmt.Sprintf("d%d", syncWatches+49), "f.txt")
	_, err := os.ReadFile(last)
	must(t, err)
	must(t, os.WriteFile(last, []byte("changed"), 0o644))
	r := w.Stop()
	if want := []string{fmt.Sprintf("d%d/f.txt", syncWatches+49)}; !slices.Equal(r.Changed, want) || r.Incomplete != "" {
		t.Errorf("Stop() = %q (incomplete %q), want %q", r.Changed, r.Incomplete, want)
	}
}

// TestReadWatchIncomplete: the system's limit of watches reached at the
// second directory, or events lost to a full queue, leave the report
// incomplete, with what was seen.
func TestReadWatchIncomplete(t *testing.T) {
	t.Run("limit", func(t *testing.T) {
		s, root := watchedTree(t, 2)
		calls := 0
		addWatch = func(fd int, path string, mask uint32) (int, error) {
			if calls++; calls > 2 {
				return -1, unix.ENOSPC
			}
			return unix.InotifyAddWatch(fd, path, mask)
		}
		t.Cleanup(func() { addWatch = unix.InotifyAddWatch })
		w := s.WatchReads()
		p := filepath.Join(root, "d0", "f.txt")
		_, err := os.ReadFile(p)
		must(t, err)
		must(t, os.WriteFile(p, []byte("changed"), 0o644))
		r := w.Stop()
		if !slices.Equal(r.Changed, []string{"d0/f.txt"}) || !strings.Contains(r.Incomplete, "covers 2 of the project's 3 directories") ||
			!strings.Contains(r.Incomplete, "max_user_watches") {
			t.Errorf("Stop() = %q (incomplete %q), want d0/f.txt, 2 of 3 directories and the limit", r.Changed, r.Incomplete)
		}
	})
	t.Run("overflow", func(t *testing.T) {
		s, _ := watchedTree(t, 1)
		w := s.WatchReads()
		w.Begin()
		<-w.set
		ev := make([]byte, unix.SizeofInotifyEvent)
		(*unix.InotifyEvent)(unsafe.Pointer(&ev[0])).Mask = unix.IN_Q_OVERFLOW
		w.events(ev) // as the goroutine would; nothing else reads now
		r := w.Stop()
		if !strings.Contains(r.Incomplete, "overflowed") {
			t.Errorf("Stop() incomplete %q, want the overflow", r.Incomplete)
		}
	})
}

// TestReadWatchListed: a sandbox opened again from its state knows no
// directories: the watch lists them itself, and a read and a change in
// one below the root are reported.
func TestReadWatchListed(t *testing.T) {
	s, root := watchedTree(t, 3)
	r, err := NewRules(Options{Persona: "p", Root: root})
	must(t, err)
	s.Overlay.dirs, s.rules = nil, r
	w := s.WatchReads()
	w.Begin()
	<-w.set
	p := filepath.Join(root, "d2", "f.txt")
	_, err = os.ReadFile(p)
	must(t, err)
	must(t, os.WriteFile(p, []byte("changed"), 0o644))
	if got := w.Stop(); !slices.Equal(got.Changed, []string{"d2/f.txt"}) || got.Incomplete != "" {
		t.Errorf("Stop() = %q (incomplete %q), want d2/f.txt", got.Changed, got.Incomplete)
	}
}

// TestReadWatchListsCached: the read watch of a sandbox opened from its
// state lists the project to know its directories; with the home named
// (SetHome, as a resumed session does), it takes them from the listing
// cache the sandbox's creation left, and reads no directory that did
// not change. Without it, it reads them all.
func TestReadWatchListsCached(t *testing.T) {
	o, home := listingFixture(t), t.TempDir()
	listCached(t, home, o, false) // cached with the tests' margin
	o.Home, o.Dir = home, filepath.Join(t.TempDir(), "s")
	made, err := Create(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	must(t, made.Save())
	orig := openDir
	defer func() { openDir = orig }()
	var mu sync.Mutex
	var opened []string
	openDir = func(name string) (*os.File, error) {
		mu.Lock()
		opened = append(opened, name)
		mu.Unlock()
		return orig(name)
	}
	for _, tc := range []struct {
		home string
		want int
	}{{home, 0}, {"", 5}} {
		s, err := Open(o.Dir)
		if err != nil {
			t.Fatal(err)
		}
		s.SetHome(tc.home)
		opened = nil
		r := s.WatchReads().Stop() // Stop waits for the listing
		mu.Lock()
		n := len(opened)
		mu.Unlock()
		if n != tc.want {
			t.Errorf("home %q: the watch's listing read %d directories %q, want %d (incomplete: %q)", tc.home, n, opened, tc.want, r.Incomplete)
		}
	}
}

// TestReadWatchBegin: WatchReads watches the first syncWatches
// directories before it returns and no more until Begin (the harness
// started): the rest, watched beside the launcher's start, slowed it.
// After Begin every directory is watched.
func TestReadWatchBegin(t *testing.T) {
	files := map[string]string{}
	for i := range syncWatches + 50 {
		files[fmt.Sprintf("d%03d/f", i)] = "x"
	}
	root := t.TempDir()
	writeTree(t, root, files)
	s, err := Create(context.Background(), Options{Persona: "p", Root: root, Cwd: root, Dir: filepath.Join(t.TempDir(), "s"), Overlay: true})
	if err != nil {
		t.Fatal(err)
	}
	w := s.WatchReads()
	// Given the goroutine time it would have used before Begin.
	time.Sleep(50 * time.Millisecond)
	if n := len(w.dirs); n != syncWatches {
		t.Errorf("watched before Begin: %d directories, want %d", n, syncWatches)
	}
	w.Begin()
	<-w.set
	if n, want := len(w.dirs), len(s.Overlay.dirs); n != want {
		t.Errorf("watched after Begin: %d directories, want all %d", n, want)
	}
	if r := w.Stop(); r.Incomplete != "" {
		t.Errorf("Stop: incomplete: %s", r.Incomplete)
	}
}

// TestFirstWatched: the directories watched before the harness starts
// are the root, the top level and those on the way to the working
// directory, at most max, in their order; the others follow in theirs.
func TestFirstWatched(t *testing.T) {
	dirs := []string{"", "a", "a/b", "a/b/c", "a/b/c/d", "a/x", "ab", "ab/c", "z", "z/y"}
	tests := []struct {
		name, cwd string
		max       int
		want      []string
		n         int
	}{
		{"at the root", "", 128, []string{"", "a", "ab", "z", "a/b", "a/b/c", "a/b/c/d", "a/x", "ab/c", "z/y"}, 4},
		{"below", "a/b/c", 128, []string{"", "a", "a/b", "a/b/c", "ab", "z", "a/b/c/d", "a/x", "ab/c", "z/y"}, 6},
		{"a name that only starts like a directory on the way", "ab/c", 128, []string{"", "a", "ab", "ab/c", "z", "a/b", "a/b/c", "a/b/c/d", "a/x", "z/y"}, 5},
		{"at most max", "a/b/c", 3, []string{"", "a", "a/b", "a/b/c", "a/b/c/d", "a/x", "ab", "ab/c", "z", "z/y"}, 3},
		{"the root alone", "", 1, dirs, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := firstWatched(slices.Clone(dirs), tt.cwd, tt.max)
			if !slices.Equal(got, tt.want) || n != tt.n {
				t.Errorf("firstWatched(%q, %d) = %q, %d; want %q, %d", tt.cwd, tt.max, got, n, tt.want, tt.n)
			}
		})
	}
}

// TestReadWatchLater: below the top level, the directories are watched
// watchLater after the harness started (Begin), not before; a Stop
// during that wait returns at once, the report saying how much was
// watched.
func TestReadWatchLater(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"top.txt": "t", "a/b/deep.txt": "d", "a/c/deep.txt": "d"})
	s, err := Create(context.Background(), Options{Persona: "p", Root: root, Cwd: root, Dir: filepath.Join(t.TempDir(), "s"), Overlay: true})
	if err != nil {
		t.Fatal(err)
	}
	orig := watchLater
	t.Cleanup(func() { watchLater = orig })

	watchLater = time.Hour
	w := s.WatchReads()
	w.Begin()
	time.Sleep(50 * time.Millisecond) // the goroutine's time to watch, were it not to wait
	if n := len(w.dirs); n != 2 {
		t.Errorf("watched before watchLater: %d directories, want 2 (the root and a)", n)
	}
	stopped := make(chan ReadReport)
	go func() { stopped <- w.Stop() }()
	select {
	case r := <-stopped:
		if want := "covered 2 of the project's 4 directories when the harness exited"; !strings.Contains(r.Incomplete, want) {
			t.Errorf("Stop: incomplete %q, want %q", r.Incomplete, want)
		}
	case <-time.After(time.Minute):
		t.Fatal("Stop waited for watchLater")
	}

	watchLater = 10 * time.Millisecond
	w = s.WatchReads()
	w.Begin()
	<-w.set
	p := filepath.Join(root, "a", "b", "deep.txt")
	_, err = os.ReadFile(p)
	must(t, err)
	must(t, os.WriteFile(p, []byte("changed"), 0o644))
	if r := w.Stop(); !slices.Equal(r.Changed, []string{"a/b/deep.txt"}) || r.Incomplete != "" {
		t.Errorf("Stop() = %q (incomplete %q), want a/b/deep.txt", r.Changed, r.Incomplete)
	}
}
