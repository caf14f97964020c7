package install

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLockSource: a local directory or tarball is recorded by its absolute
// path, whether given relative or not; an npm spec, a git source or a
// path that is not there as given.
func TestLockSource(t *testing.T) {
	wd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(wd, "pack"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wd, "p.tgz"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ source, want string }{
		{"pack", filepath.Join(wd, "pack")},
		{"./p.tgz", filepath.Join(wd, "p.tgz")},
		{filepath.Join(wd, "pack"), filepath.Join(wd, "pack")},
		{"@acme/personas@1.2.0", "@acme/personas@1.2.0"},
		{"github:acme/personas@main", "github:acme/personas@main"},
		{"gone", "gone"},
	}
	for _, tt := range tests {
		if got := LockSource(wd, tt.source); got != tt.want {
			t.Errorf("LockSource(%q) = %q, want %q", tt.source, got, tt.want)
		}
	}
}
