package session

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/internal/git"
)

// TestAttemptSnapshots checks what an attempt makes of the tree after
// setup and after the agent: the changes, the patch, and the protected
// files restored.
func TestAttemptSnapshots(t *testing.T) {
	if !git.Installed() {
		t.Skip("needs git")
	}
	outside := t.TempDir()
	write := func(t *testing.T, root, rel, text string, perm os.FileMode) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, perm); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		// setup is the tree after setup: path -> content; agent changes
		// it.
		setup   map[string]string
		agent   func(t *testing.T, root string)
		protect []string
		// want are the changes and the files restored; files is what the
		// tree holds after the restore ("" for absent), mode the
		// permissions of a file there.
		created, updated, deleted, restored []string
		files                               map[string]string
		mode                                map[string]os.FileMode
		links                               map[string]string
		patch                               []string
	}{
		{
			name:  "the setup changed a file and the agent changed it back",
			setup: map[string]string{"a.txt": "by setup\n"},
			agent: func(t *testing.T, root string) {
				write(t, root, "a.txt", "original\n", 0o644)
			},
			updated: []string{"a.txt"},
			files:   map[string]string{"a.txt": "original\n"},
			patch:   []string{"-by setup", "+original"},
		},
		{
			name:  "a protected file the agent deleted",
			setup: map[string]string{"calc_test.go": "test\n", "calc.go": "code\n"},
			agent: func(t *testing.T, root string) {
				os.Remove(filepath.Join(root, "calc_test.go"))
				os.Remove(filepath.Join(root, "calc.go"))
			},
			protect:  []string{"**/*_test.go"},
			deleted:  []string{"calc.go", "calc_test.go"},
			restored: []string{"calc_test.go"},
			files:    map[string]string{"calc_test.go": "test\n", "calc.go": ""},
			patch:    []string{"deleted file mode 100644"},
		},
		{
			name:  "a protected file the agent added",
			setup: map[string]string{"pkg/keep.go": "k\n"},
			agent: func(t *testing.T, root string) {
				write(t, root, "pkg/new_test.go", "always passes\n", 0o644)
				write(t, root, "pkg/new.go", "new\n", 0o644)
			},
			protect:  []string{"**/*_test.go"},
			created:  []string{"pkg/new.go", "pkg/new_test.go"},
			restored: []string{"pkg/new_test.go"},
			files:    map[string]string{"pkg/new_test.go": "", "pkg/new.go": "new\n"},
			patch:    []string{"new file mode 100644"},
		},
		{
			name:  "a protected script the agent made no longer executable",
			setup: map[string]string{"check.sh": "exit 0\n"},
			agent: func(t *testing.T, root string) {
				write(t, root, "check.sh", "exit 1\n", 0o644)
			},
			protect:  []string{"check.sh"},
			updated:  []string{"check.sh"},
			restored: []string{"check.sh"},
			files:    map[string]string{"check.sh": "exit 0\n"},
			mode:     map[string]os.FileMode{"check.sh": 0o755},
			patch:    []string{"old mode 100755"},
		},
		{
			name:  "a protected directory the agent replaced by a link out of the tree",
			setup: map[string]string{"tests/a_test.go": "a\n"},
			agent: func(t *testing.T, root string) {
				os.RemoveAll(filepath.Join(root, "tests"))
				if err := os.Symlink(outside, filepath.Join(root, "tests")); err != nil {
					t.Fatal(err)
				}
			},
			protect:  []string{"tests/*_test.go"},
			created:  []string{"tests"},
			deleted:  []string{"tests/a_test.go"},
			restored: []string{"tests/a_test.go"},
			files:    map[string]string{"tests/a_test.go": "a\n"},
		},
		{
			name:  "a protected link the agent pointed elsewhere",
			setup: map[string]string{"data.txt": "data\n"},
			agent: func(t *testing.T, root string) {
				os.Remove(filepath.Join(root, "fixture"))
				if err := os.Symlink("elsewhere", filepath.Join(root, "fixture")); err != nil {
					t.Fatal(err)
				}
			},
			protect:  []string{"fixture"},
			updated:  []string{"fixture"},
			restored: []string{"fixture"},
			links:    map[string]string{"fixture": "data.txt"},
			patch:    []string{"-data.txt", "+elsewhere"},
		},
		{
			name:  "files .gitignore ignores are not the agent's changes",
			setup: map[string]string{".gitignore": "node_modules/\n*.log\n", "node_modules/x.js": "dep\n"},
			agent: func(t *testing.T, root string) {
				write(t, root, "node_modules/x.js", "patched dep\n", 0o644)
				write(t, root, "run.log", "log\n", 0o644)
				write(t, root, ".git/HEAD", "ref: refs/heads/elsewhere\n", 0o644)
			},
			protect: []string{"**"},
			files:   map[string]string{"node_modules/x.js": "patched dep\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			root := t.TempDir()
			for rel, text := range tt.setup {
				perm := os.FileMode(0o644)
				if strings.HasSuffix(rel, ".sh") {
					perm = 0o755
				}
				write(t, root, rel, text, perm)
			}
			for rel, target := range tt.links {
				if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
					t.Fatal(err)
				}
			}
			ss, err := newSnapshots(ctx, filepath.Join(t.TempDir(), attemptDir), root)
			if err != nil {
				t.Fatal(err)
			}
			base, err := ss.take(ctx, "setup")
			if err != nil {
				t.Fatal(err)
			}
			tt.agent(t, root)
			after, err := ss.take(ctx, "agent")
			if err != nil {
				t.Fatal(err)
			}
			created, updated, deleted := changesBetween(base, after)
			for _, c := range []struct {
				what      string
				got, want []string
			}{{"created", created, tt.created}, {"updated", updated, tt.updated}, {"deleted", deleted, tt.deleted}} {
				if !slices.Equal(c.got, orNone(c.want)) {
					t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
				}
			}
			patch, _, cut, err := ss.patch(ctx, base, after, PatchMax)
			if err != nil || cut {
				t.Fatalf("patch: cut %v, %v", cut, err)
			}
			for _, p := range tt.patch {
				if !strings.Contains(patch, p) {
					t.Errorf("patch lacks %q:\n%s", p, patch)
				}
			}
			restored, err := ss.restore(ctx, base, after, tt.protect)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(restored, tt.restored) {
				t.Errorf("restored = %q, want %q", restored, tt.restored)
			}
			for rel, want := range tt.files {
				data, err := os.ReadFile(filepath.Join(root, rel))
				switch {
				case want == "" && err == nil:
					t.Errorf("%s is there, want it absent", rel)
				case want != "" && string(data) != want:
					t.Errorf("%s = %q (%v), want %q", rel, data, err, want)
				}
			}
			for rel, want := range tt.mode {
				if fi, err := os.Stat(filepath.Join(root, rel)); err != nil || fi.Mode().Perm() != want {
					t.Errorf("mode of %s = %v (%v), want %v", rel, fi.Mode().Perm(), err, want)
				}
			}
			for rel, want := range tt.links {
				if got, err := os.Readlink(filepath.Join(root, rel)); got != want {
					t.Errorf("link %s = %q (%v), want %q", rel, got, err, want)
				}
			}
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Errorf("restore wrote outside the tree: %v", entries)
			}
		})
	}
}

// orNone is s, or an empty list for nil.
func orNone(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TestStepOutput checks what is kept of a step's output: all of it up to
// the cap, else the first and last halves with a line between.
func TestStepOutput(t *testing.T) {
	o := newStepOutput(10)
	o.Write([]byte("0123"))
	o.Write([]byte("4567"))
	if got, n, cut := o.result(); got != "01234567" || n != 8 || cut {
		t.Errorf("result = %q, %d, %v, want all of it", got, n, cut)
	}
	o.Write([]byte("89abcdef"))
	got, n, cut := o.result()
	if want := "01234\n[workforce: 6 bytes cut here]\nbcdef"; got != want || n != 16 || !cut {
		t.Errorf("result = %q, %d, %v, want %q, 16, true", got, n, cut, want)
	}
}
