package pathutil

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReal: Real resolves what filepath.EvalSymlinks resolves, to
// the same path, and fails where it fails.
func TestReal(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/b/c", "x y/z", "deep/1/2/3/4/5/6/7/8/9"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := []string{"a/b/c/AGENTS.md", "x y/z/CLAUDE.md", "deep/1/2/3/4/5/6/7/8/9/f"}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"abs":        filepath.Join(root, "a/b"),
		"rel":        "a/b/c",
		"chain":      "rel",
		"a/up":       "../x y",
		"a/b/file":   "c/AGENTS.md",
		"dangling":   "nowhere",
		"loop1":      "loop2",
		"loop2":      "loop1",
		"deep/1/dot": ".",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{
		".", "a", "a/b/c", "a/b/c/AGENTS.md", "x y/z/CLAUDE.md", "deep/1/2/3/4/5/6/7/8/9/f",
		"abs", "abs/c", "rel", "chain/AGENTS.md", "a/up/z", "a/b/file", "deep/1/dot/dot/2",
		"dangling", "loop1", "missing", "a/b/c/AGENTS.md/below",
	} {
		p := filepath.Join(root, rel)
		want, wantErr := filepath.EvalSymlinks(p)
		got, err := Real(p)
		if (err != nil) != (wantErr != nil) || got != want {
			t.Errorf("Real(%s) = %q, %v; EvalSymlinks gives %q, %v", rel, got, err, want, wantErr)
		}
	}
	// A relative path stays relative, as EvalSymlinks leaves it.
	t.Chdir(root)
	for _, rel := range []string{"a/b", "rel", "chain/AGENTS.md", "missing"} {
		want, wantErr := filepath.EvalSymlinks(rel)
		got, err := Real(rel)
		if (err != nil) != (wantErr != nil) || got != want {
			t.Errorf("Real(%s) = %q, %v; EvalSymlinks gives %q, %v", rel, got, err, want, wantErr)
		}
	}
}
