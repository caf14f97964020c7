package mount

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// syncTree makes a real tree of files (slash paths to contents) in
// base/root and a session of it, with its home in base/home.
func syncTree(t *testing.T, base string, files map[string]string) (*Sandbox, string) {
	t.Helper()
	root := filepath.Join(base, "root")
	must(t, os.MkdirAll(root, 0o755))
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	s, err := create(context.Background(), Options{Home: filepath.Join(base, "home"), Persona: "p", Root: root, Cwd: root})
	must(t, err)
	return s, root
}

// syncWithin syncs s, failing the test if Sync does not return (it
// would block on a FIFO).
func syncWithin(t *testing.T, s *Sandbox, o SyncOptions) (*Report, error) {
	t.Helper()
	type result struct {
		r   *Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := s.Sync(context.Background(), o)
		done <- result{r, err}
	}()
	select {
	case res := <-done:
		return res.r, res.err
	case <-time.After(30 * time.Second):
		t.Fatal("Sync did not return")
	}
	return nil, nil
}

// snapshot describes every entry below dir, following no link: the
// content and permissions of regular files, the target of links, the
// type of the rest.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("file %v %q", fi.Mode(), data)
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link to " + target
		default:
			out[rel] = fi.Mode().Type().String()
		}
		return nil
	})
	must(t, err)
	return out
}

// tempFiles lists the temporary files of sync-back below dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), tempPrefix) {
			found = append(found, p)
		}
		return err
	}))
	return found
}

func write(t *testing.T, path, content string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(content), 0o644))
}

func replaceBy(t *testing.T, path string, make func(string) error) {
	t.Helper()
	must(t, os.RemoveAll(path))
	must(t, make(path))
}

func mkfifo(p string) error   { return unix.Mkfifo(p, 0o644) }
func mksocket(p string) error { return unix.Mknod(p, unix.S_IFSOCK|0o644, 0) }

// TestSyncRealTreeChangedType: where the real tree changed type since the
// sandbox was made (a directory on the way became a link or a file, a file
// became a link, a directory, a FIFO, a socket), sync-back writes nothing
// there, follows no link, never blocks, and reports a conflict with the
// agent's version saved; every other file syncs.
func TestSyncRealTreeChangedType(t *testing.T) {
	files := map[string]string{"a.txt": "a", "sub/e.txt": "e", "sub/f.txt": "f"}
	agentWrites := func(t *testing.T, tree string) {
		write(t, filepath.Join(tree, "a.txt"), "a by agent")
		write(t, filepath.Join(tree, "sub/e.txt"), "e by agent")
		write(t, filepath.Join(tree, "sub/new.txt"), "new by agent")
	}
	tests := []struct {
		name    string
		agent   func(t *testing.T, tree string)
		user    func(t *testing.T, root, outside string)
		deletes bool
		// written are the real files sync-back writes (with the
		// agent's content); conflicts and deleted are sorted.
		written   []string
		conflicts []string
		deleted   []string
	}{
		{
			name:  "directory became a link out of the project",
			agent: agentWrites,
			user: func(t *testing.T, root, outside string) {
				replaceBy(t, filepath.Join(root, "sub"), func(p string) error { return os.Symlink(outside, p) })
			},
			written:   []string{"a.txt"},
			conflicts: []string{"sub/e.txt", "sub/new.txt"},
		},
		{
			name:  "directory became a link into the project",
			agent: agentWrites,
			user: func(t *testing.T, root, outside string) {
				must(t, os.Rename(filepath.Join(root, "sub"), filepath.Join(root, "moved")))
				must(t, os.Symlink("moved", filepath.Join(root, "sub")))
			},
			written:   []string{"a.txt"},
			conflicts: []string{"sub/e.txt", "sub/new.txt"},
		},
		{
			name:  "directory became a file",
			agent: agentWrites,
			user: func(t *testing.T, root, outside string) {
				replaceBy(t, filepath.Join(root, "sub"), func(p string) error { return os.WriteFile(p, []byte("user"), 0o644) })
			},
			written:   []string{"a.txt"},
			conflicts: []string{"sub/e.txt", "sub/new.txt"},
		},
		{
			name:  "file became a link",
			agent: agentWrites,
			user: func(t *testing.T, root, outside string) {
				replaceBy(t, filepath.Join(root, "a.txt"), func(p string) error { return os.Symlink(filepath.Join(outside, "secret"), p) })
			},
			written:   []string{"sub/e.txt", "sub/new.txt"},
			conflicts: []string{"a.txt"},
		},
		{
			name:  "file became a directory",
			agent: agentWrites,
			user: func(t *testing.T, root, outside string) {
				replaceBy(t, filepath.Join(root, "a.txt"), func(p string) error { return os.MkdirAll(filepath.Join(p, "inside"), 0o755) })
			},
			written:   []string{"sub/e.txt", "sub/new.txt"},
			conflicts: []string{"a.txt"},
		},
		{
			name:  "file became a FIFO",
			agent: agentWrites,
			user: func(t *testing.T, root, outside string) {
				replaceBy(t, filepath.Join(root, "a.txt"), mkfifo)
			},
			written:   []string{"sub/e.txt", "sub/new.txt"},
			conflicts: []string{"a.txt"},
		},
		{
			name:  "a FIFO where the agent creates a file",
			agent: agentWrites,
			user: func(t *testing.T, root, outside string) {
				must(t, mkfifo(filepath.Join(root, "sub/new.txt")))
			},
			written:   []string{"a.txt", "sub/e.txt"},
			conflicts: []string{"sub/new.txt"},
		},
		{
			name:  "file became a socket",
			agent: agentWrites,
			user: func(t *testing.T, root, outside string) {
				replaceBy(t, filepath.Join(root, "a.txt"), mksocket)
			},
			written:   []string{"sub/e.txt", "sub/new.txt"},
			conflicts: []string{"a.txt"},
		},
		{
			name: "deletion below a directory moved out and linked",
			agent: func(t *testing.T, tree string) {
				must(t, os.Remove(filepath.Join(tree, "sub/e.txt")))
			},
			user: func(t *testing.T, root, outside string) {
				// The same file, moved: as the copy found it.
				must(t, os.Rename(filepath.Join(root, "sub"), filepath.Join(outside, "sub")))
				must(t, os.Symlink(filepath.Join(outside, "sub"), filepath.Join(root, "sub")))
			},
			deletes:   true,
			conflicts: []string{"sub/e.txt"},
		},
		{
			name: "deletion of a file that became a link",
			agent: func(t *testing.T, tree string) {
				must(t, os.Remove(filepath.Join(tree, "a.txt")))
				must(t, os.Remove(filepath.Join(tree, "sub/f.txt")))
			},
			user: func(t *testing.T, root, outside string) {
				must(t, os.Rename(filepath.Join(root, "a.txt"), filepath.Join(outside, "a.txt")))
				must(t, os.Symlink(filepath.Join(outside, "a.txt"), filepath.Join(root, "a.txt")))
			},
			deletes:   true,
			conflicts: []string{"a.txt"},
			deleted:   []string{"sub/f.txt"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			s, root := syncTree(t, base, files)
			outside := filepath.Join(base, "outside")
			write(t, filepath.Join(outside, "secret"), "secret")
			write(t, filepath.Join(outside, "e.txt"), "outside e")
			tc.agent(t, s.Tree)
			tc.user(t, root, outside)
			realBefore, outsideBefore := snapshot(t, root), snapshot(t, outside)
			agentSide := snapshot(t, s.Tree)

			r, err := syncWithin(t, s, SyncOptions{Deletes: tc.deletes})
			if err != nil {
				t.Fatalf("Sync: %v", err)
			}
			if got := snapshot(t, outside); !mapsEqual(got, outsideBefore) {
				t.Errorf("sync-back wrote outside the project:\n got %v\nwant %v", got, outsideBefore)
			}
			realAfter := snapshot(t, root)
			for _, rel := range tc.written {
				if realAfter[rel] != agentSide[rel] {
					t.Errorf("real %s = %s, want the agent's %s", rel, realAfter[rel], agentSide[rel])
				}
				delete(realAfter, rel)
				delete(realBefore, rel)
			}
			for _, rel := range tc.deleted {
				delete(realBefore, rel)
			}
			if !mapsEqual(realAfter, realBefore) {
				t.Errorf("the real tree changed beyond the files written:\n got %v\nwant %v", realAfter, realBefore)
			}
			var got []string
			for _, c := range r.Conflicts {
				got = append(got, c.Path)
				if c.Real != filepath.Join(root, filepath.FromSlash(c.Path)) {
					t.Errorf("conflict %s: real path %s", c.Path, c.Real)
				}
				if tc.deletes {
					continue
				}
				data, err := os.ReadFile(c.Saved)
				want, _ := os.ReadFile(filepath.Join(s.Tree, filepath.FromSlash(c.Path)))
				if err != nil || !bytes.Equal(data, want) {
					t.Errorf("conflict %s: saved %s = %q, %v; want the agent's %q", c.Path, c.Saved, data, err, want)
				}
			}
			if !slices.Equal(got, tc.conflicts) {
				t.Errorf("conflicts = %v, want %v", got, tc.conflicts)
			}
			if !slices.Equal(r.Deleted, append([]string{}, tc.deleted...)) {
				t.Errorf("deleted = %v, want %v", r.Deleted, tc.deleted)
			}
			if len(r.Failed) != 0 {
				t.Errorf("failed = %v", r.Failed)
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestSyncReportsOddFiles: what the agent made that is not a regular file,
// anew or in the place of a regular file, is reported as not synced and
// never made; the real files stay, deletions applied or not, but for a
// file the agent replaced by a link: its removal is a deletion
// (TestSyncTypeChanges).
func TestSyncReportsOddFiles(t *testing.T) {
	s, root := syncTree(t, t.TempDir(), map[string]string{"a.txt": "a", "b.txt": "b", "c.txt": "c", "d.txt": "d"})
	replaceBy(t, filepath.Join(s.Tree, "a.txt"), func(p string) error { return os.Symlink("d.txt", p) })
	replaceBy(t, filepath.Join(s.Tree, "b.txt"), mkfifo)
	replaceBy(t, filepath.Join(s.Tree, "c.txt"), mksocket)
	must(t, mkfifo(filepath.Join(s.Tree, "pipe")))
	must(t, mksocket(filepath.Join(s.Tree, "sock")))
	must(t, os.Symlink("d.txt", filepath.Join(s.Tree, "link")))
	before := snapshot(t, root)
	r, err := syncWithin(t, s, SyncOptions{Deletes: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.txt", "b.txt", "c.txt", "link", "pipe", "sock"}; !slices.Equal(r.NotSynced, want) {
		t.Errorf("not synced = %v, want %v", r.NotSynced, want)
	}
	if !slices.Equal(r.Deleted, []string{"a.txt"}) || r.Changes() != 1 || len(r.Conflicts) != 0 || len(r.Unapplied) != 0 {
		t.Errorf("report = %+v, want a.txt deleted, no other change", r)
	}
	delete(before, "a.txt")
	if got := snapshot(t, root); !mapsEqual(got, before) {
		t.Errorf("the real tree changed: %v, want %v", got, before)
	}
}

// TestSyncKeepsHoles: a sparse file stays sparse in the real tree, written
// anew, over a file, or saved as a conflict.
func TestSyncKeepsHoles(t *testing.T) {
	const size = 64 << 20
	tests := []struct {
		name     string
		rel      string
		conflict bool
	}{
		{"created", "new.bin", false},
		{"updated", "a.bin", false},
		{"saved as a conflict", "a.bin", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, root := syncTree(t, t.TempDir(), map[string]string{"a.bin": "a"})
			box := filepath.Join(s.Tree, tc.rel)
			f, err := os.Create(box)
			must(t, err)
			must(t, f.Truncate(size))
			for off, text := range map[int64]string{0: "head", size / 2: "middle", size - 4: "tail"} {
				_, err := f.WriteAt([]byte(text), off)
				must(t, err)
			}
			must(t, f.Close())
			if allocated(t, box) > 1<<20 {
				t.Skip("the file system of the test directory cannot make sparse files")
			}
			if tc.conflict {
				write(t, filepath.Join(root, tc.rel), "changed by the user")
			}
			r, err := s.Sync(context.Background(), SyncOptions{})
			must(t, err)
			dst := filepath.Join(root, tc.rel)
			if tc.conflict {
				if len(r.Conflicts) != 1 {
					t.Fatalf("conflicts = %v", r.Conflicts)
				}
				dst = r.Conflicts[0].Saved
			}
			want, _ := os.ReadFile(box)
			if got, err := os.ReadFile(dst); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: not the agent's content (%v)", dst, err)
			}
			if n := allocated(t, dst); n > 1<<20 {
				t.Errorf("%s: %d bytes allocated for %d of data in %d: the holes were filled", dst, n, 14, size)
			}
		})
	}
}

// allocated returns the bytes the file at path has on disk.
func allocated(t *testing.T, path string) int64 {
	t.Helper()
	var st unix.Stat_t
	must(t, unix.Stat(path, &st))
	return st.Blocks * 512
}

// TestSyncModeBits: no set-user-ID or set-group-ID bit reaches the real
// tree, and a real file with another hard link is never written or
// chmod'ed in place: the other name keeps its content and mode.
func TestSyncModeBits(t *testing.T) {
	tests := []struct {
		name    string
		agent   func(t *testing.T, tree string)
		updated []string
		// modes are the real files' modes wanted after the sync; the
		// hard link outside keeps its content and mode.
		modes map[string]fs.FileMode
	}{
		{
			name: "set-id bits of a changed file",
			agent: func(t *testing.T, tree string) {
				write(t, filepath.Join(tree, "a.txt"), "a by agent")
				must(t, os.Chmod(filepath.Join(tree, "a.txt"), 0o755|fs.ModeSetuid|fs.ModeSetgid))
			},
			updated: []string{"a.txt"},
			modes:   map[string]fs.FileMode{"a.txt": 0o755},
		},
		{
			name: "set-id bits alone",
			agent: func(t *testing.T, tree string) {
				must(t, os.Chmod(filepath.Join(tree, "b.txt"), 0o644|fs.ModeSetuid))
			},
			modes: map[string]fs.FileMode{"b.txt": 0o644},
		},
		{
			name: "hard-linked file changed",
			agent: func(t *testing.T, tree string) {
				write(t, filepath.Join(tree, "linked.txt"), "changed by agent")
			},
			updated: []string{"linked.txt"},
			modes:   map[string]fs.FileMode{"linked.txt": 0o644},
		},
		{
			name: "hard-linked file chmod'ed",
			agent: func(t *testing.T, tree string) {
				must(t, os.Chmod(filepath.Join(tree, "linked.txt"), 0o600))
			},
			updated: []string{"linked.txt"},
			modes:   map[string]fs.FileMode{"linked.txt": 0o600},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			s, root := syncTree(t, base, map[string]string{"a.txt": "a", "b.txt": "b", "linked.txt": "shared"})
			other := filepath.Join(base, "outside")
			must(t, os.Mkdir(other, 0o755))
			other = filepath.Join(other, "other-name")
			must(t, os.Link(filepath.Join(root, "linked.txt"), other))
			tc.agent(t, s.Tree)
			r, err := s.Sync(context.Background(), SyncOptions{})
			must(t, err)
			if !slices.Equal(r.Updated, append([]string{}, tc.updated...)) {
				t.Errorf("updated = %v, want %v", r.Updated, tc.updated)
			}
			for rel, want := range tc.modes {
				fi, err := os.Stat(filepath.Join(root, rel))
				must(t, err)
				if fi.Mode() != want {
					t.Errorf("real %s: mode %v, want %v", rel, fi.Mode(), want)
				}
			}
			if fi, err := os.Stat(other); err != nil || fi.Mode() != 0o644 {
				t.Errorf("the other hard link: %v, %v; want mode %v", fi.Mode(), err, fs.FileMode(0o644))
			}
			if data, _ := os.ReadFile(other); string(data) != "shared" {
				t.Errorf("the other hard link holds %q, want %q", data, "shared")
			}
		})
	}
}

// The tests below run Sync in a child process: the test binary again,
// running TestSyncChild, unprivileged (so that permissions hold even when
// the tests run as root) or killed at a stage of a write.

const (
	childDirEnv     = "MOUNT_SYNC_CHILD"
	childOutEnv     = "MOUNT_SYNC_OUT"
	childKillEnv    = "MOUNT_SYNC_KILL_AT"
	childNamedEnv   = "MOUNT_SYNC_NAMED"
	childDeletesEnv = "MOUNT_SYNC_DELETES"
	nobody          = 65534
)

// childResult is what the child process reports.
type childResult struct {
	Report    *Report
	Err       string
	SyncError bool
	JSON      json.RawMessage // the report as JSON
}

// TestSyncChild is the child process of the tests that sync in another
// process; it does nothing in a plain test run.
func TestSyncChild(t *testing.T) {
	dir := os.Getenv(childDirEnv)
	if dir == "" {
		t.Skip("the child process of other tests")
	}
	s, err := Open(dir)
	must(t, err)
	if stage := os.Getenv(childKillEnv); stage != "" {
		syncHook = func(at string) {
			if at == stage {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
	}
	anonTemps = os.Getenv(childNamedEnv) == ""
	r, err := s.Sync(context.Background(), SyncOptions{Deletes: os.Getenv(childDeletesEnv) != ""})
	res := childResult{Report: r}
	if err != nil {
		var se *SyncError
		res.Err, res.SyncError = err.Error(), errors.As(err, &se)
	}
	res.JSON, _ = json.Marshal(r)
	data, err := json.Marshal(res)
	must(t, err)
	must(t, os.WriteFile(os.Getenv(childOutEnv), data, 0o644))
}

// childBase returns a directory every user may enter, for a test whose
// child process runs unprivileged; it is removed at the end of the test.
func childBase(t *testing.T) string {
	t.Helper()
	base, err := os.MkdirTemp("", "mount-sync-")
	must(t, err)
	must(t, os.Chmod(base, 0o755))
	t.Cleanup(func() {
		_ = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if d != nil && d.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
		_ = os.RemoveAll(base)
	})
	return base
}

// runChild saves s and syncs it in a child process with the extra
// environment env; unprivileged, it runs as an unprivileged user when the
// test runs as root (base, made by childBase, is given to that user). It
// returns what the child reported, or the error of a child that did not
// finish.
func runChild(t *testing.T, s *Sandbox, base string, unprivileged bool, env ...string) (*childResult, error) {
	t.Helper()
	must(t, s.Save())
	exe := os.Args[0]
	out := filepath.Join(base, "child.json")
	os.Remove(out)
	var attr *syscall.SysProcAttr
	if unprivileged && os.Geteuid() == 0 {
		// The test binary's directory is the owner's only: a copy.
		exe = filepath.Join(base, "mount.test")
		in, err := os.Open(os.Args[0])
		must(t, err)
		f, err := os.OpenFile(exe, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
		must(t, err)
		_, err = io.Copy(f, in)
		in.Close()
		must(t, err)
		must(t, f.Close())
		must(t, filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, nobody, nobody)
		}))
		attr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	cmd := exec.Command(exe, "-test.run=^TestSyncChild$", "-test.count=1")
	cmd.Dir = base
	cmd.Env = append(os.Environ(), childDirEnv+"="+s.Dir, childOutEnv+"="+out, "GORACE=atexit_sleep_ms=0")
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = attr
	output, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, output)
	}
	var res childResult
	data, err := os.ReadFile(out)
	must(t, err)
	must(t, json.Unmarshal(data, &res))
	return &res, nil
}

// TestSyncCarriesOnAfterFailures: a path that cannot be read or written
// fails alone: it is reported in Failed (and in the report's JSON), the
// other files sync, Sync returns a *SyncError, and nothing under an
// unreadable sandbox directory is taken for deleted.
func TestSyncCarriesOnAfterFailures(t *testing.T) {
	files := map[string]string{"a.txt": "a", "b.txt": "b", "c.txt": "c", "sub/e.txt": "e", "locked/x.txt": "x"}
	type setup func(t *testing.T, s *Sandbox, root string)
	unreadableDir := func(t *testing.T, s *Sandbox, root string) {
		write(t, filepath.Join(s.Tree, "locked/new.txt"), "new in locked")
		must(t, os.Chmod(filepath.Join(s.Tree, "locked"), 0))
	}
	unreadableFile := func(t *testing.T, s *Sandbox, root string) {
		write(t, filepath.Join(s.Tree, "c.txt"), "c by agent")
		must(t, os.Chmod(filepath.Join(s.Tree, "c.txt"), 0))
	}
	unwritableDir := func(t *testing.T, s *Sandbox, root string) {
		write(t, filepath.Join(s.Tree, "sub/e.txt"), "e by agent")
		must(t, os.Chmod(filepath.Join(root, "sub"), 0o555))
	}
	unsavable := func(t *testing.T, s *Sandbox, root string) {
		write(t, filepath.Join(s.Tree, "b.txt"), "b by agent")
		write(t, filepath.Join(root, "b.txt"), "b by user")
		write(t, filepath.Join(s.Dir, ConflictsDir), "not a directory")
	}
	tests := []struct {
		name   string
		setups []setup
		failed []string
	}{
		{"unreadable sandbox directory", []setup{unreadableDir}, []string{"locked"}},
		{"unreadable sandbox file", []setup{unreadableFile}, []string{"c.txt"}},
		{"unwritable real directory", []setup{unwritableDir}, []string{"sub/e.txt"}},
		{"conflict that cannot be saved", []setup{unsavable}, []string{"b.txt"}},
		{"all at once", []setup{unreadableDir, unreadableFile, unwritableDir, unsavable}, []string{"b.txt", "c.txt", "locked", "sub/e.txt"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := childBase(t)
			s, root := syncTree(t, base, files)
			write(t, filepath.Join(s.Tree, "a.txt"), "a by agent")
			write(t, filepath.Join(s.Tree, "new.txt"), "new by agent")
			must(t, os.Remove(filepath.Join(s.Tree, "locked/x.txt"))) // unseen when locked is unreadable
			for _, f := range tc.setups {
				f(t, s, root)
			}
			res, err := runChild(t, s, base, true, childDeletesEnv+"=1")
			if err != nil {
				t.Fatal(err)
			}
			r := res.Report
			var failed []string
			for _, f := range r.Failed {
				failed = append(failed, f.Path)
				if f.Error == "" {
					t.Errorf("failure of %s without an error", f.Path)
				}
			}
			if !slices.Equal(failed, tc.failed) {
				t.Errorf("failed = %v, want %v", failed, tc.failed)
			}
			if !res.SyncError || !strings.HasPrefix(res.Err, fmt.Sprintf("cannot sync back %d file", len(tc.failed))) {
				t.Errorf("error = %q (a *SyncError: %v)", res.Err, res.SyncError)
			}
			if !bytes.Contains(res.JSON, []byte(`"failed":[{"path":`)) {
				t.Errorf("the report's JSON has no failures: %s", res.JSON)
			}
			for rel, want := range map[string]string{"a.txt": "a by agent", "new.txt": "new by agent"} {
				if got, _ := os.ReadFile(filepath.Join(root, rel)); string(got) != want {
					t.Errorf("real %s = %q, want %q: sync-back stopped", rel, got, want)
				}
			}
			locked := slices.Contains(tc.failed, "locked")
			if _, err := os.Stat(filepath.Join(root, "locked/x.txt")); locked != (err == nil) {
				t.Errorf("real locked/x.txt: %v; its directory unreadable in the sandbox: %v", err, locked)
			}
		})
	}
}

// TestSyncLeavesNoTempFile: a sync killed in the middle of writing a file,
// then run again, leaves no temporary file in the real tree, whether the
// file was being written unnamed or under a temporary name.
func TestSyncLeavesNoTempFile(t *testing.T) {
	tests := []struct {
		name     string
		named    bool
		stage    string
		leftover bool // what the killed sync leaves
		// userEdits has the user change a.txt before the sync runs
		// again: a conflict, never written.
		userEdits bool
	}{
		{"unnamed, killed before it is named", false, "written", false, false},
		{"unnamed, killed before the rename", false, "named", true, false},
		{"named, killed after writing", true, "written", true, false},
		{"named, killed before the rename", true, "named", true, false},
		{"named, killed before the rename, then a conflict", true, "named", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			s, root := syncTree(t, base, map[string]string{"a.txt": "a", "sub/b.txt": "b"})
			if !tc.named && !anonSupported(t, root) {
				t.Skip("the file system of the test directory has no unnamed files")
			}
			write(t, filepath.Join(s.Tree, "a.txt"), "a by agent")
			write(t, filepath.Join(s.Tree, "sub/b.txt"), "b by agent")
			env := []string{childKillEnv + "=" + tc.stage}
			if tc.named {
				env = append(env, childNamedEnv+"=1")
			}
			_, err := runChild(t, s, base, false, env...)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the child was not killed at %s: %v", tc.stage, err)
			}
			if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "a" {
				t.Errorf("killed before the rename, the real a.txt is %q", got)
			}
			if left := tempFiles(t, root); (len(left) > 0) != tc.leftover {
				t.Errorf("the killed sync left %v; want a temporary file: %v", left, tc.leftover)
			}

			wantA, wantUpdated := "a by agent", []string{"a.txt", "sub/b.txt"}
			if tc.userEdits {
				wantA, wantUpdated = "a by user", []string{"sub/b.txt"}
				write(t, filepath.Join(root, "a.txt"), wantA)
			}
			s, err = Open(s.Dir)
			must(t, err)
			r, err := s.Sync(context.Background(), SyncOptions{})
			must(t, err)
			if !slices.Equal(r.Updated, wantUpdated) {
				t.Errorf("updated = %v, want %v", r.Updated, wantUpdated)
			}
			if left := tempFiles(t, root); len(left) > 0 {
				t.Errorf("temporary files left after the sync run again: %v", left)
			}
			for rel, want := range map[string]string{"a.txt": wantA, "sub/b.txt": "b by agent"} {
				if got, _ := os.ReadFile(filepath.Join(root, rel)); string(got) != want {
					t.Errorf("real %s = %q, want %q", rel, got, want)
				}
			}
		})
	}
}

// anonSupported reports whether the file system of dir makes unnamed
// files.
func anonSupported(t *testing.T, dir string) bool {
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	must(t, err)
	defer unix.Close(dfd)
	fd, err := openAnon(dfd)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}
