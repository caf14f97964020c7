package mount

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fsCasefoldFL is FS_CASEFOLD_FL, the attribute of a directory whose
// names are looked up case-insensitively (chattr +F).
const fsCasefoldFL = 0x40000000

// TestSyncDotGitOnCaseInsensitiveTree: where the real tree looks names up
// as a case-insensitive (or NTFS, or HFS+) file system does, the agent's
// .GIT/hooks/pre-commit and the like never reach the real .git. On a
// casefolded tmpfs (root, Linux 6.13 or later built with Unicode
// support); and, where that cannot be had, on a tree where each such name
// is bound (a bind mount, root) to .git once the copy is made: a lookup
// of it then reaches .git, as on those file systems, and the copy saw
// .git alone, as it would there. Each is skipped, saying why, where it
// cannot be made.
func TestSyncDotGitOnCaseInsensitiveTree(t *testing.T) {
	names := []string{".GIT", ".Git", ".git.", "GIT~1", ".g\u200cit"}
	run := func(t *testing.T, root string, alias func(t *testing.T, root, name string) bool) {
		write(t, filepath.Join(root, ".git/HEAD"), "ref: refs/heads/main\n")
		must(t, os.MkdirAll(filepath.Join(root, ".git/hooks"), 0o755))
		write(t, filepath.Join(root, "a.txt"), "a\n")
		s, err := create(context.Background(), Options{Home: t.TempDir(), Persona: "p", Root: root, Cwd: root})
		if err != nil {
			t.Fatal(err)
		}
		var wrote []string
		for i, name := range names {
			if !alias(t, root, name) {
				continue
			}
			rel := name + "/hooks/hook" + string(rune('0'+i))
			write(t, filepath.Join(s.Tree, filepath.FromSlash(rel)), "#!/bin/sh\n")
			wrote = append(wrote, rel)
		}
		if len(wrote) == 0 {
			t.Skip("no name could be made to reach .git")
		}
		r, err := s.Sync(context.Background(), SyncOptions{Deletes: true})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(wrote)
		if !slices.Equal(r.NotSynced, wrote) || r.Changes() != 0 {
			t.Errorf("report = %+v, want not synced %q and no change", r, wrote)
		}
		hooks, err := os.ReadDir(filepath.Join(root, ".git/hooks"))
		must(t, err)
		for _, h := range hooks {
			t.Errorf("the agent's %s reached the real .git/hooks", h.Name())
		}
	}

	t.Run("casefolded tmpfs", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("mounting a tmpfs needs root")
		}
		dir := t.TempDir()
		if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "casefold"); err != nil {
			t.Skipf("no casefolded tmpfs here (Linux 6.13 or later, built with CONFIG_UNICODE): %v", err)
		}
		t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
		root := filepath.Join(dir, "root")
		must(t, os.Mkdir(root, 0o755))
		if err := setCasefold(root); err != nil {
			t.Skipf("cannot make %s case-insensitive (chattr +F): %v", root, err)
		}
		write(t, filepath.Join(root, "Probe"), "")
		if _, err := os.Stat(filepath.Join(root, "pROBE")); err != nil {
			t.Skipf("%s is not case-insensitive: %v", root, err)
		}
		must(t, os.Remove(filepath.Join(root, "Probe")))
		run(t, root, func(t *testing.T, root, name string) bool {
			_, err := os.Stat(filepath.Join(root, name, "HEAD"))
			return err == nil // .GIT, .Git; NTFS's and HFS+'s names are not this file system's
		})
	})

	t.Run("names bound to .git", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("a bind mount needs root")
		}
		root := t.TempDir()
		run(t, root, func(t *testing.T, root, name string) bool {
			at := filepath.Join(root, name)
			must(t, os.Mkdir(at, 0o755))
			if err := unix.Mount(filepath.Join(root, ".git"), at, "", unix.MS_BIND, ""); err != nil {
				t.Skipf("cannot bind %s to .git: %v", name, err)
			}
			t.Cleanup(func() { unix.Unmount(at, unix.MNT_DETACH) })
			return true
		})
	})
}

// setCasefold gives the empty directory dir the casefold attribute.
func setCasefold(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if err != nil {
		return err
	}
	if flags&fsCasefoldFL != 0 {
		return nil
	}
	if err := unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, int(flags|fsCasefoldFL)); err != nil {
		return err
	}
	if flags, err = unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS); err == nil && flags&fsCasefoldFL == 0 {
		return errors.New("the attribute did not hold")
	}
	return err
}

// TestLiveNeverCrossesDotGitAliases: live sync carries a name taken for
// .git neither way.
func TestLiveNeverCrossesDotGitAliases(t *testing.T) {
	s, l, root := liveSession(t, LiveOptions{Deletes: true})
	for _, rel := range dotGitWrites {
		write(t, filepath.Join(s.Tree, filepath.FromSlash(rel)), "by the agent\n")
		write(t, filepath.Join(root, filepath.FromSlash("user/"+rel)), "by the user\n")
	}
	write(t, filepath.Join(s.Tree, "marker.txt"), "last\n")
	write(t, filepath.Join(root, "user-marker.txt"), "last\n")
	waitFor(t, "marker.txt in the real tree", contentIs(filepath.Join(root, "marker.txt"), "last\n"))
	waitFor(t, "user-marker.txt in the sandbox", contentIs(filepath.Join(s.Tree, "user-marker.txt"), "last\n"))
	time.Sleep(300 * time.Millisecond)
	rep := l.Stop()
	if len(rep.Failed) != 0 || len(rep.Conflicts) != 0 {
		t.Errorf("live report: %+v", rep)
	}
	for _, rel := range dotGitWrites {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel))); err == nil {
			t.Errorf("the agent's %s crossed to the real tree", rel)
		}
		if _, err := os.Lstat(filepath.Join(s.Tree, filepath.FromSlash("user/"+rel))); err == nil {
			t.Errorf("the user's %s crossed to the sandbox", "user/"+rel)
		}
	}
}
