package mount

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The primitives of the sandbox copy, each as this system's build has it
// and as the portable fallback of other systems (copytree_other.go) has
// it, run on the same cases: the fallbacks are tested on Linux too. (A
// build with the portablefs tag runs the whole package's tests through
// the fallbacks.)

// TestOpenBeneath: a directory below the root opens, by its relative path,
// to that directory; a path that goes through a link (to a directory
// inside the root or outside it, at its end or in its middle), climbs
// out with "..", or is absolute does not open. A ".." that stays below
// the root may open (openat2 allows it) or not (openComponents refuses
// every ".."; the copy never asks for one).
func TestOpenBeneath(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "a", "b c", "d"), 0o755))
	must(t, os.Symlink("a", filepath.Join(root, "in")))
	must(t, os.Symlink(outside, filepath.Join(root, "a", "out")))
	must(t, os.Symlink("../..", filepath.Join(root, "a", "up")))
	must(t, os.WriteFile(filepath.Join(root, "a", "file"), nil, 0o644))
	rootfd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	must(t, err)
	defer unix.Close(rootfd)

	const (
		opens   = iota // it opens, to root/rel
		refused        // it does not open
		either         // it may open, to root/rel
	)
	cases := []struct {
		rel  string
		want int
	}{
		{"", opens},
		{".", opens},
		{"a", opens},
		{"a/b c", opens},
		{"a/b c/d", opens},
		{"in", refused},
		{"in/b c", refused},
		{"a/out", refused},
		{"a/up", refused},
		{"a/up/tmp", refused},
		{"..", refused},
		{"a/b c/../../..", refused},
		{"a/..", either},
		{"a/../a", either},
		{outside, refused},
		{"/", refused},
		{"a/file", refused},
		{"a/missing", refused},
	}
	for _, impl := range []struct {
		name string
		open func(rootfd int, rel string) (int, error)
	}{
		{"openBeneath", openBeneath},
		{"openComponents", openComponents},
	} {
		for _, c := range cases {
			fd, err := impl.open(rootfd, c.rel)
			if c.want == either && err != nil {
				continue
			}
			if c.want == refused {
				if err == nil {
					unix.Close(fd)
					t.Errorf("%s(%q) opened it, want an error", impl.name, c.rel)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s(%q): %v", impl.name, c.rel, err)
				continue
			}
			var got, want unix.Stat_t
			must(t, unix.Fstat(fd, &got))
			unix.Close(fd)
			must(t, unix.Lstat(filepath.Join(root, c.rel), &want))
			if got.Ino != want.Ino || got.Dev != want.Dev {
				t.Errorf("%s(%q) opened another directory", impl.name, c.rel)
			}
		}
	}
}

// TestSetDirTimes: a directory's access and modification times are set,
// to the nanosecond, through its descriptor.
func TestSetDirTimes(t *testing.T) {
	for _, impl := range []struct {
		name string
		set  func(fd int, t unix.Timespec) error
	}{
		{"setDirTimes", setDirTimes},
		{"dirTimesPortable", dirTimesPortable},
	} {
		for _, when := range []time.Time{
			time.Date(2001, 2, 3, 4, 5, 6, 789, time.UTC),
			time.Date(1999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		} {
			dir := filepath.Join(t.TempDir(), "d")
			must(t, os.Mkdir(dir, 0o755))
			fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			must(t, err)
			err = impl.set(fd, unix.NsecToTimespec(when.UnixNano()))
			unix.Close(fd)
			if err != nil {
				t.Errorf("%s: %v", impl.name, err)
				continue
			}
			var st unix.Stat_t
			must(t, unix.Lstat(dir, &st))
			if got := time.Unix(st.Mtim.Unix()); !got.Equal(when) {
				t.Errorf("%s: modification time %v, want %v", impl.name, got, when)
			}
			if got := time.Unix(st.Atim.Unix()); !got.Equal(when) {
				t.Errorf("%s: access time %v, want %v", impl.name, got, when)
			}
		}
	}
}

// TestCopyData: a file's bytes are copied whole, empty, one byte, more
// than a read's buffer, several megabytes.
func TestCopyData(t *testing.T) {
	for _, impl := range []struct {
		name string
		copy func(in, out int, size int64) error
	}{
		{"copyData", copyData},
		{"copyRest", func(in, out int, _ int64) error { return copyRest(in, out) }},
	} {
		for _, size := range []int{0, 1, 128 << 10, 128<<10 + 1, 3<<20 + 17} {
			data := make([]byte, size)
			rand.Read(data)
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			must(t, os.WriteFile(src, data, 0o644))
			in, err := unix.Open(src, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			must(t, err)
			out, err := unix.Open(dst, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
			must(t, err)
			err = impl.copy(in, out, int64(size))
			unix.Close(in)
			unix.Close(out)
			if err != nil {
				t.Errorf("%s of %d bytes: %v", impl.name, size, err)
				continue
			}
			if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) {
				t.Errorf("%s of %d bytes: %d bytes copied, or other bytes", impl.name, size, len(got))
			}
		}
	}
}
