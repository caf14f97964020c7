package native

import (
	"os"
	"path/filepath"
	"testing"
)

// TestProjectAgentDir: export's default directory is the harness's agents
// directory at the project root above the working directory (links
// resolved), or in the working directory outside a project.
func TestProjectAgentDir(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo, loose := filepath.Join(base, "repo"), filepath.Join(base, "loose")
	for _, d := range []string{filepath.Join(repo, ".git"), filepath.Join(repo, "a", "b"), loose} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(repo, "a"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ wd, harness, want string }{
		{filepath.Join(repo, "a", "b"), "claude", filepath.Join(repo, ".claude", "agents")},
		{filepath.Join(base, "link", "b"), "codex", filepath.Join(repo, ".codex", "agents")},
		{loose, "opencode", filepath.Join(loose, ".opencode", "agents")},
	}
	for _, tt := range tests {
		if got, err := ProjectAgentDir(tt.wd, tt.harness); err != nil || got != tt.want {
			t.Errorf("ProjectAgentDir(%s, %s) = %q, %v; want %q", tt.wd, tt.harness, got, err, tt.want)
		}
	}
	if _, err := ProjectAgentDir(filepath.Join(base, "gone"), "claude"); err == nil {
		t.Error("ProjectAgentDir of a working directory that is not there: no error")
	}
}
