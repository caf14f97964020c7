package mount

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
)

// dotGitWrites are files an agent writes below names a file system takes
// for .git: case (vfat, exFAT, NTFS, SMB, a casefolded directory), NTFS's
// trailing dots, short names and streams, HFS+'s ignorable code points.
var dotGitWrites = []string{
	".GIT/hooks/pre-commit",
	".Git/config",
	".git./hooks/x",
	"GIT~1/hooks/x",
	".g\u200cit/x",
	".git::$INDEX_ALLOCATION/hooks/post-checkout",
	"sub/.gIt/hooks/pre-push",
	"sub/.GIT",
}

func TestDotGitAlias(t *testing.T) {
	for rel, want := range map[string]bool{
		".GIT": true, ".GIT/hooks/pre-commit": true, "a/b/GIT~1/x": true, "a/.git./x": true,
		"a/.g\u200cit": true, "a/b.git/x": false, ".git": false, ".git/hooks/pre-commit": false,
		"sub/.git/config": false, ".gitignore": false, ".github/workflows/ci.yml": false, "": false,
	} {
		if got := dotGitAlias(rel); got != want {
			t.Errorf("dotGitAlias(%+q) = %v, want %v", rel, got, want)
		}
	}
}

// TestSyncNeverCrossesDotGitAliases: what the agent writes below a name
// taken for .git is never written to the real tree by sync-back, whether
// the session is synced as it is, read back from its manifest (sessions
// apply, sessions sync) or shown (a dry run); it is reported as not
// synced, each file, link and FIFO; the rest syncs.
func TestSyncNeverCrossesDotGitAliases(t *testing.T) {
	for _, tc := range []struct {
		name           string
		reopen, dryRun bool
	}{{"synced", false, false}, {"reopened", true, false}, {"dry run", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			s, root := syncTree(t, t.TempDir(), map[string]string{
				".git/HEAD": "ref: refs/heads/main\n", ".git/hooks/.keep": "", "sub/a.txt": "a",
			})
			for _, rel := range dotGitWrites {
				write(t, filepath.Join(s.Tree, filepath.FromSlash(rel)), "#!/bin/sh\ntouch /tmp/pwned\n")
			}
			must(t, os.Symlink("/bin/true", filepath.Join(s.Tree, ".GIT/hooks/post-commit")))
			must(t, mkfifo(filepath.Join(s.Tree, "GIT~1/fifo")))
			write(t, filepath.Join(s.Tree, "new.txt"), "new")
			if tc.reopen {
				must(t, s.Save())
				var err error
				if s, err = Open(s.Dir); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, root)
			r, err := syncWithin(t, s, SyncOptions{Deletes: true, DryRun: tc.dryRun})
			if err != nil {
				t.Fatal(err)
			}
			want := append(slices.Clone(dotGitWrites), ".GIT/hooks/post-commit", "GIT~1/fifo")
			sort.Strings(want)
			if !slices.Equal(r.NotSynced, want) {
				t.Errorf("not synced = %q, want %q", r.NotSynced, want)
			}
			if !slices.Equal(r.Created, []string{"new.txt"}) || r.Changes() != 1 || len(r.Conflicts) != 0 || len(r.Failed) != 0 {
				t.Errorf("report = %+v, want new.txt created, nothing else", r)
			}
			if !tc.dryRun {
				before["new.txt"] = `file -rw-r--r-- "new"`
			}
			if got := snapshot(t, root); !mapsEqual(got, before) {
				t.Errorf("the real tree = %v, want %v", got, before)
			}
		})
	}
}

// TestCreateLeavesOutDotGitAliases: a name taken for .git in the real tree
// is not copied into the sandbox, nor listed in the manifest or the plan;
// a warm sandbox where the agent wrote one loses it when it is refreshed.
func TestCreateLeavesOutDotGitAliases(t *testing.T) {
	root := t.TempDir()
	for _, rel := range append(slices.Clone(dotGitWrites), ".git/HEAD", "a.txt") {
		write(t, filepath.Join(root, filepath.FromSlash(rel)), "x\n")
	}
	home := t.TempDir()
	o := Options{Home: home, Persona: "p", Root: root, Cwd: root}
	s, err := create(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range dotGitWrites {
		if _, err := os.Lstat(filepath.Join(s.Tree, filepath.FromSlash(rel))); err == nil {
			t.Errorf("%s was copied into the sandbox", rel)
		}
	}
	if _, err := os.Stat(filepath.Join(s.Tree, "a.txt")); err != nil {
		t.Errorf("a.txt was not copied: %v", err)
	}
	for rel := range s.realFiles() {
		if dotGitAlias(rel) {
			t.Errorf("the manifest lists %s", rel)
		}
	}
	p, err := PlanFor(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range slices.Concat(p.Hidden, p.Ignored, p.Readonly) {
		if dotGitAlias(rel) {
			t.Errorf("the plan lists %s", rel)
		}
	}

	// The agent writes one in a sandbox that is parked, then reused.
	for _, rel := range dotGitWrites {
		write(t, filepath.Join(s.Tree, filepath.FromSlash(rel)), "by the agent\n")
	}
	if _, err := s.Sync(context.Background(), SyncOptions{Remember: true}); err != nil {
		t.Fatal(err)
	}
	warm := filepath.Join(home, "warm", "tree")
	must(t, s.Park(warm))
	must(t, s.Remove())
	o.Warm = warm
	again, err := create(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Reused {
		t.Fatal("the warm sandbox was not used")
	}
	for _, rel := range dotGitWrites {
		if _, err := os.Lstat(filepath.Join(again.Tree, filepath.FromSlash(rel))); err == nil {
			t.Errorf("%s stayed in the refreshed sandbox", rel)
		}
		if got, _ := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))); string(got) != "x\n" {
			t.Errorf("the real %s = %q, want it as it was", rel, got)
		}
	}
}

// TestInGitDirAliases: a run started below a name taken for .git is
// refused as one below .git is: nothing there syncs back.
func TestInGitDirAliases(t *testing.T) {
	root := t.TempDir()
	for rel, want := range map[string]bool{
		".GIT": true, ".GIT/hooks": true, "sub/GIT~1": true, ".git.": true, "sub": false, ".github": false,
	} {
		if got := InGitDir(root, filepath.FromSlash(rel)); got != want {
			t.Errorf("InGitDir(%q) = %v, want %v", rel, got, want)
		}
	}
}

// TestOldManifestDotGitAliases: a manifest an older workforce wrote may
// list a file below a name taken for .git (copied from a case-sensitive
// repository); read back, it lists none, so that the agent's deletion or
// change of it never reaches the real tree.
func TestOldManifestDotGitAliases(t *testing.T) {
	s, root := syncTree(t, t.TempDir(), map[string]string{"a.txt": "a", ".GIT/hooks/pre-commit": "real", "GIT~1/x": "real"})
	// As the copy made it before: in the sandbox, and in the manifest.
	for _, rel := range []string{".GIT/hooks/pre-commit", "GIT~1/x"} {
		real := filepath.Join(root, filepath.FromSlash(rel))
		fi, err := os.Stat(real)
		must(t, err)
		write(t, filepath.Join(s.Tree, filepath.FromSlash(rel)), "real")
		s.realFiles()[rel] = entry{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
	}
	s.edited = true // saved from the map
	must(t, s.Save())
	back, err := Open(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for rel := range back.realFiles() {
		if dotGitAlias(rel) {
			t.Errorf("the manifest read back lists %s", rel)
		}
	}
	must(t, os.Remove(filepath.Join(back.Tree, ".GIT/hooks/pre-commit")))
	write(t, filepath.Join(back.Tree, "GIT~1/x"), "by the agent")
	r, err := back.Sync(context.Background(), SyncOptions{Deletes: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Changes() != 0 || !slices.Equal(r.NotSynced, []string{"GIT~1/x"}) {
		t.Errorf("report = %+v, want GIT~1/x not synced, no change", r)
	}
	for _, rel := range []string{".GIT/hooks/pre-commit", "GIT~1/x"} {
		if got, _ := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))); string(got) != "real" {
			t.Errorf("the real %s = %q, want it as it was", rel, got)
		}
	}
}
