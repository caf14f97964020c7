//go:build linux

package mount

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// listingFixture writes a project for the listing cache's tests and waits
// until its directories' times are older than testMargin.
func listingFixture(t *testing.T) Options {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a.txt": "a", "a.log": "log", "sub/c.txt": "c", "sub/deep/d.txt": "d", "sub/deep/in/e.txt": "e",
		"gone/x.txt": "x", ".agentignore": ".env\n", ".env": "SECRET=1", "AGENTS.md": "agents",
		".agentreadonly": "ro.txt\n", "ro.txt": "ro", ".git/HEAD": "ref: refs/heads/main\n",
	})
	must(t, os.Symlink("a.txt", filepath.Join(root, "link")))
	time.Sleep(2 * testMargin) // past the margin and the file system's coarse clock
	return Options{Persona: "p", Root: root, Cwd: root, Hide: []string{"AGENTS.md"}, Overlay: true}
}

// testMargin is the racy margin of the tests: the fixtures' directories
// are older than it when they are first listed.
const testMargin = 30 * time.Millisecond

// listCached lists o's project with the listing cache of home (margin
// testMargin, or racyMargin when racy) and saves it; it fails unless the
// result is the full listing's.
func listCached(t *testing.T, home string, o Options, racy bool) overlayScan {
	t.Helper()
	r, err := NewRules(o)
	must(t, err)
	gd := projectGitDirs(o.Root)
	c := openListingCache(home, o.Root, r, gd)
	if c == nil {
		t.Skipf("the listing cache does not trust the file system of %s", o.Root)
	}
	if !racy {
		c.margin = testMargin
	}
	got, err := findWhiteouts(context.Background(), o.Root, r, gd, c)
	must(t, err)
	c.save()
	want, err := findWhiteouts(context.Background(), o.Root, r, gd, nil)
	must(t, err)
	read := got.read
	got.read, want.read = 0, 0
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("cached listing = %+v, want the full listing's %+v", got, want)
	}
	got.read = read
	return got
}

// TestWhiteoutCache: a second listing of an unchanged project reads no
// directory; one after a change reads what changed, and finds what a
// full listing finds: a new ignored file in a cached directory is hidden,
// a renamed, removed or replaced directory is seen as such, and changed
// rules (the project's .agentignore, the persona's ignore patterns, the
// hidden names) make the cache void.
func TestWhiteoutCache(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, o *Options)
		hidden []string // among the whiteouts after the change
		shown  []string // not among them
		dirs   []string // among the directories covered
		read   int      // directories read after the change; -1: all
	}{
		{name: "unchanged", change: func(*testing.T, *Options) {}, hidden: []string{".env", "AGENTS.md"}, read: 0},
		{name: "a new ignored file in a cached directory", change: func(t *testing.T, o *Options) {
			writeTree(t, o.Root, map[string]string{"sub/deep/.env": "SECRET=2"})
		}, hidden: []string{"sub/deep/.env"}, read: 1},
		{name: "a new hidden file in a cached directory", change: func(t *testing.T, o *Options) {
			writeTree(t, o.Root, map[string]string{"sub/deep/in/AGENTS.md": "nested"})
		}, hidden: []string{"sub/deep/in/AGENTS.md"}, read: 1},
		{name: "a renamed directory", change: func(t *testing.T, o *Options) {
			writeTree(t, o.Root, map[string]string{"sub/deep/in/.env": "SECRET=3"})
			must(t, os.Rename(filepath.Join(o.Root, "sub", "deep"), filepath.Join(o.Root, "sub", "moved")))
		}, hidden: []string{"sub/moved/in/.env"}, shown: []string{"sub/deep/in/.env"}, dirs: []string{"sub/moved", "sub/moved/in"}, read: 3},
		{name: "a removed directory", change: func(t *testing.T, o *Options) {
			must(t, os.RemoveAll(filepath.Join(o.Root, "gone")))
		}, read: 1},
		{name: "a directory replaced by a link", change: func(t *testing.T, o *Options) {
			must(t, os.RemoveAll(filepath.Join(o.Root, "gone")))
			must(t, os.Symlink("sub", filepath.Join(o.Root, "gone")))
		}, read: 1},
		{name: "a new pattern in .agentignore", change: func(t *testing.T, o *Options) {
			must(t, os.WriteFile(filepath.Join(o.Root, ".agentignore"), []byte(".env\n*.log\n"), 0o644))
		}, hidden: []string{"a.log"}, read: -1},
		{name: "the persona's ignore patterns", change: func(t *testing.T, o *Options) {
			o.Ignore = []string{"c.txt"}
		}, hidden: []string{"sub/c.txt"}, read: -1},
		{name: "the hidden names", change: func(t *testing.T, o *Options) {
			o.Hide = []string{"AGENTS.md", "d.txt"}
		}, hidden: []string{"sub/deep/d.txt"}, read: -1},
		{name: "the persona's ignore file", change: func(t *testing.T, o *Options) {
			writeTree(t, o.Root, map[string]string{".p.agentignore": "e.txt\n"})
		}, hidden: []string{"sub/deep/in/e.txt"}, read: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, home := listingFixture(t), t.TempDir()
			first := listCached(t, home, o, false)
			if first.read != len(first.dirs) {
				t.Fatalf("the first listing read %d directories of %d", first.read, len(first.dirs))
			}
			tc.change(t, &o)
			got := listCached(t, home, o, false)
			for _, h := range tc.hidden {
				if !slices.Contains(got.hide, h) {
					t.Errorf("%s is not hidden: whiteouts %q", h, got.hide)
				}
			}
			for _, s := range tc.shown {
				if slices.Contains(got.hide, s) {
					t.Errorf("%s is still hidden", s)
				}
			}
			for _, d := range tc.dirs {
				if !slices.Contains(got.dirs, d) {
					t.Errorf("%s is not among the directories %q", d, got.dirs)
				}
			}
			want := tc.read
			if want < 0 {
				want = len(got.dirs)
			}
			if got.read != want {
				t.Errorf("the listing after the change read %d directories, want %d", got.read, want)
			}
		})
	}
}

// TestWhiteoutCacheDirs: the directories a listing covers are the
// project's, the root as "", neither the hidden ones nor git's, whether
// listed or taken from the cache.
func TestWhiteoutCacheDirs(t *testing.T) {
	o, home := listingFixture(t), t.TempDir()
	writeTree(t, o.Root, map[string]string{"node_modules/m/index.js": "m", ".git/objects/x": "x"})
	want := []string{"", "gone", "sub", "sub/deep", "sub/deep/in"}
	for _, pass := range []string{"listed", "cached"} {
		if got := listCached(t, home, o, false); !slices.Equal(got.dirs, want) {
			t.Errorf("%s: directories %q, want %q", pass, got.dirs, want)
		}
	}
}

// TestWhiteoutCacheRacy: a directory changed less than racyMargin before
// the listing began is never cached: the next listing reads it again,
// and sees what changed since.
func TestWhiteoutCacheRacy(t *testing.T) {
	o, home := listingFixture(t), t.TempDir() // every directory made just now
	first := listCached(t, home, o, true)
	writeTree(t, o.Root, map[string]string{"sub/.env": "SECRET=4"})
	got := listCached(t, home, o, true)
	if !slices.Contains(got.hide, "sub/.env") {
		t.Errorf("sub/.env is not hidden: whiteouts %q", got.hide)
	}
	if got.read != len(first.dirs) {
		t.Errorf("the second listing read %d directories, want all %d: a racy one was cached", got.read, len(first.dirs))
	}
}

// TestWhiteoutCacheSettled: a directory is cached only when it is on the
// root's file system and its modification and change times are both at
// least the margin older than the listing's start.
func TestWhiteoutCacheSettled(t *testing.T) {
	start := time.Unix(1000, 0)
	var root unix.Stat_t
	root.Dev = 7
	c := &listingCache{start: start, margin: time.Second, dev: uint64(root.Dev)}
	at := func(d time.Duration) unix.Timespec { return unix.NsecToTimespec(start.Add(d).UnixNano()) }
	for _, tc := range []struct {
		name         string
		otherFS      bool
		mtime, ctime time.Duration
		want         bool
	}{
		{"settled", false, -2 * time.Second, -2 * time.Second, true},
		{"modified within the margin", false, -time.Second / 2, -2 * time.Second, false},
		{"changed within the margin", false, -2 * time.Second, -time.Second / 2, false},
		{"at the margin", false, -time.Second, -2 * time.Second, false},
		{"in the future", false, time.Hour, time.Hour, false},
		{"another file system", true, -2 * time.Second, -2 * time.Second, false},
	} {
		st := &unix.Stat_t{Dev: root.Dev, Mtim: at(tc.mtime), Ctim: at(tc.ctime)}
		if tc.otherFS {
			st.Dev++
		}
		if got := c.settled(st); got != tc.want {
			t.Errorf("%s: settled = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestWhiteoutCacheDamaged: a cache file that is not one of these rules
// (damaged, cut short, of another format, empty, a directory) is ignored:
// the listing is the full one, without an error, and replaces it.
func TestWhiteoutCacheDamaged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(path string, data []byte) error
	}{
		{"a byte changed", func(p string, d []byte) error { d[len(d)/2] ^= 1; return os.WriteFile(p, d, 0o600) }},
		{"cut short", func(p string, d []byte) error { return os.WriteFile(p, d[:len(d)-1], 0o600) }},
		{"another format", func(p string, d []byte) error {
			d[len(listingMagic)-1]++
			return os.WriteFile(p, d, 0o600)
		}},
		{"empty", func(p string, _ []byte) error { return os.WriteFile(p, nil, 0o600) }},
		{"a directory", func(p string, _ []byte) error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Mkdir(p, 0o700)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, home := listingFixture(t), t.TempDir()
			first := listCached(t, home, o, false)
			r, err := NewRules(o)
			must(t, err)
			file := openListingCache(home, o.Root, r, projectGitDirs(o.Root)).file
			data, err := os.ReadFile(file)
			must(t, err)
			must(t, tc.damage(file, data))
			if got := listCached(t, home, o, false); got.read != len(first.dirs) {
				t.Errorf("read %d directories, want all %d", got.read, len(first.dirs))
			}
		})
	}
}

// TestWhiteoutCacheKept: a listing that read again a few of many cached
// directories (what sync-back wrote into) leaves the cache file as it
// is: the next listing reads them again, and still finds what changed.
func TestWhiteoutCacheKept(t *testing.T) {
	o, home := listingFixture(t), t.TempDir()
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("many/d%d/f.txt", i)] = "f"
	}
	writeTree(t, o.Root, files)
	time.Sleep(2 * testMargin)
	listCached(t, home, o, false)
	r, err := NewRules(o)
	must(t, err)
	file := openListingCache(home, o.Root, r, projectGitDirs(o.Root)).file
	before, err := os.ReadFile(file)
	must(t, err)
	writeTree(t, o.Root, map[string]string{"many/d7/.env": "SECRET=5"})
	time.Sleep(2 * testMargin)
	for _, pass := range []string{"first", "second"} {
		got := listCached(t, home, o, false)
		if !slices.Contains(got.hide, "many/d7/.env") {
			t.Errorf("%s listing: many/d7/.env is not hidden: whiteouts %q", pass, got.hide)
		}
		if got.read != 1 {
			t.Errorf("%s listing read %d directories, want 1", pass, got.read)
		}
		if after, err := os.ReadFile(file); err != nil || !bytes.Equal(after, before) {
			t.Errorf("%s listing rewrote the cache for one directory of %d (%v)", pass, len(got.dirs), err)
		}
	}
}

// FuzzParseListing: parseListing never fails but with errListing, and
// what it reads is written back the same.
func FuzzParseListing(f *testing.F) {
	var sum [32]byte
	sum[0] = 1
	f.Add(encodeListing(map[string]*cachedDir{
		"":    {id: dirID{dev: 1, ino: 2, mtime: 3, ctime: -4}, ls: overlayListing{hide: []string{".env"}, dirs: []string{"sub"}}},
		"sub": {id: dirID{dev: 1, ino: 5}, ls: overlayListing{links: []string{"sub/l"}, readonly: []string{"sub/r"}, dotgits: []string{"sub/.git"}}},
	}, sum))
	f.Add(encodeListing(nil, sum))
	f.Add([]byte(listingMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		dirs, err := parseListing(data, sum)
		if err != nil {
			if err != errListing {
				t.Fatalf("parseListing: %v, want errListing", err)
			}
			return
		}
		again, err := parseListing(encodeListing(dirs, sum), sum)
		if err != nil || !reflect.DeepEqual(again, dirs) {
			t.Fatalf("written back and read again: %v, %v; want %v", again, err, dirs)
		}
	})
}

// TestWhiteoutUnlistable: a directory the user cannot list (openDir
// refuses it, as the kernel does a mode-100 directory to its owner) is
// hidden whole, with what its listing would have hidden in it unknown;
// it is not cached, so once listable again it is listed.
func TestWhiteoutUnlistable(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"locked/.env": "SECRET\n", "locked/a.txt": "a\n", "open/b.txt": "b\n", "c.txt": "c\n"})
	o := Options{Persona: "p", Root: root}
	locked := filepath.Join(root, "locked")
	openDir = func(name string) (*os.File, error) {
		if name == locked {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
		}
		return os.Open(name)
	}
	t.Cleanup(func() { openDir = os.Open })
	home := t.TempDir()
	got := listCached(t, home, o, false)
	if !slices.Contains(got.hide, "locked") || slices.Contains(got.dirs, "locked") {
		t.Errorf("hide %v, dirs %v: want locked hidden whole, not among the directories covered", got.hide, got.dirs)
	}
	openDir = os.Open
	got = listCached(t, home, o, false)
	if slices.Contains(got.hide, "locked") || !slices.Contains(got.dirs, "locked") || got.read == 0 {
		t.Errorf("once listable: hide %v, dirs %v, read %d: want locked listed (read), not hidden", got.hide, got.dirs, got.read)
	}
}
