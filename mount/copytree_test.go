package mount

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// copyAll is a visitor that copies everything as it is.
type copyAll struct{}

func (copyAll) entry(string, string, string, warmStat) bool { return false }
func (copyAll) done([]statEntry)                            {}
func (copyAll) link(_, _, target string) (string, bool)     { return target, true }

// TestCopyTree: the copy has every regular file's bytes, mode and
// modification time, every directory's mode and time, every symlink's
// target, and no FIFO.
func TestCopyTree(t *testing.T) {
	src := t.TempDir()
	big := make([]byte, 3<<20+17)
	rand.Read(big)
	old := time.Date(2001, 2, 3, 4, 5, 6, 789, time.UTC)
	files := []struct {
		rel  string
		data []byte
		mode fs.FileMode
	}{
		{"empty", nil, 0o644},
		{"a.txt", []byte("a\n"), 0o644},
		{"run.sh", []byte("#!/bin/sh\n"), 0o755},
		{"secret", []byte("s"), 0o600},
		{"ro.txt", []byte("ro"), 0o444},
		{"deep/er/still/x.go", []byte("package x\n"), 0o664},
		{"big.bin", big, 0o644},
		{"rodir/inside.txt", []byte("in"), 0o644},
	}
	for _, f := range files {
		p := filepath.Join(src, f.rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, f.data, 0o600))
		must(t, os.Chmod(p, f.mode))
		must(t, os.Chtimes(p, old, old))
	}
	must(t, os.Symlink("a.txt", filepath.Join(src, "link")))
	must(t, os.Symlink("/nowhere", filepath.Join(src, "dangling")))
	must(t, syscall.Mkfifo(filepath.Join(src, "fifo"), 0o644))
	must(t, os.Chmod(filepath.Join(src, "rodir"), 0o555))
	must(t, os.Chtimes(filepath.Join(src, "deep"), old, old))
	t.Cleanup(func() { os.Chmod(filepath.Join(src, "rodir"), 0o755) })

	dst := filepath.Join(t.TempDir(), "copy")
	if err := copyTree(context.Background(), src, dst, 4, copyAll{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeAll(dst) })
	for _, f := range files {
		fi, err := os.Lstat(filepath.Join(dst, f.rel))
		if err != nil {
			t.Errorf("%s: %v", f.rel, err)
			continue
		}
		data, _ := os.ReadFile(filepath.Join(dst, f.rel))
		if !bytes.Equal(data, f.data) || fi.Mode() != f.mode || !fi.ModTime().Equal(old) {
			t.Errorf("%s: %d bytes, mode %v, time %v; want %d bytes, %v, %v", f.rel, len(data), fi.Mode(), fi.ModTime(), len(f.data), f.mode, old)
		}
	}
	for dir, mode := range map[string]fs.FileMode{"rodir": 0o555 | fs.ModeDir, "deep": 0o755 | fs.ModeDir} {
		fi, err := os.Lstat(filepath.Join(dst, dir))
		if err != nil || fi.Mode() != mode {
			t.Errorf("directory %s: %v, %v; want mode %v", dir, fi.Mode(), err, mode)
		}
	}
	if fi, _ := os.Lstat(filepath.Join(dst, "deep")); !fi.ModTime().Equal(old) {
		t.Errorf("directory deep has time %v, want %v", fi.ModTime(), old)
	}
	for link, want := range map[string]string{"link": "a.txt", "dangling": "/nowhere"} {
		if got, err := os.Readlink(filepath.Join(dst, link)); err != nil || got != want {
			t.Errorf("link %s -> %q, %v; want %q", link, got, err, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(dst, "fifo")); err == nil {
		t.Error("a FIFO was copied")
	}
	if err := removeAll(dst); err != nil {
		t.Errorf("removeAll of a copy with a read-only directory: %v", err)
	}
}

// TestCopyTreeCancelled: a cancelled copy stops with the context's error.
func TestCopyTreeCancelled(t *testing.T) {
	src := t.TempDir()
	for i := range 50 {
		must(t, os.MkdirAll(filepath.Join(src, "d", string(rune('a'+i%26))), 0o755))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := copyTree(ctx, src, filepath.Join(t.TempDir(), "copy"), 2, copyAll{}); err == nil {
		t.Fatal("copyTree with a cancelled context succeeded")
	}
}

// TestReadRels: a directory read in several reads (more names than one
// buffer holds) lists every entry once, below the directory it is asked
// for, and never "." or "..": by getdents64 on Linux (readRels) and by the
// portable fallback of other systems (readRelsPortable) alike.
func TestReadRels(t *testing.T) {
	dir := t.TempDir()
	want := map[string]bool{}
	for i := range 3000 {
		name := fmt.Sprintf("entry-%04d-%s", i, strings.Repeat("x", i%40))
		if i%7 == 0 {
			must(t, os.Mkdir(filepath.Join(dir, name), 0o755))
		} else {
			must(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
		}
		want[name] = true
	}
	for _, impl := range []struct {
		name string
		read func(fd int, path, rel string) ([]string, error)
	}{
		{"readRels", readRels},
		{"readRelsPortable", readRelsPortable},
	} {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		must(t, err)
		defer unix.Close(fd)
		for _, below := range []string{"", "a", "a/b c"} {
			if _, err := unix.Seek(fd, 0, 0); err != nil {
				t.Fatal(err)
			}
			rels, err := impl.read(fd, dir, below)
			must(t, err)
			if len(rels) != len(want) {
				t.Errorf("%s below %q: %d entries, want %d", impl.name, below, len(rels), len(want))
			}
			seen := map[string]bool{}
			for _, rel := range rels {
				name := baseName(rel, below)
				if below != "" && rel != below+"/"+name {
					t.Errorf("%s below %q: %q is not below it", impl.name, below, rel)
				}
				if !want[name] || seen[name] {
					t.Errorf("%s below %q: %q unexpected or listed twice", impl.name, below, name)
				}
				seen[name] = true
			}
		}
	}
}

// TestUniqueRels: a path listed twice (renamed over during a listing) is
// kept once, in its first place.
func TestUniqueRels(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{nil, []string{}},
		{[]string{"a", "b"}, []string{"a", "b"}},
		{[]string{"d/a", "d/b", "d/a", "d/c", "d/b"}, []string{"d/a", "d/b", "d/c"}},
	} {
		if got := uniqueRels(append([]string(nil), c.in...)); !slices.Equal(got, c.want) {
			t.Errorf("uniqueRels(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
