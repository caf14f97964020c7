package session

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckRoot: a project root at or inside a harness's or git's own
// configuration in the home directory, or where a link of one leads, is
// refused, and so is one at or above the home directory (a home
// directory kept as a repository); one beside them is not.
func TestCheckRoot(t *testing.T) {
	home := t.TempDir()
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	t.Setenv("HOME", home)
	for _, d := range []string{".claude/proj", ".config/git", ".config/opencode", "dotfiles/codex/p", "src/p", ".claudex"} {
		must(t, os.MkdirAll(filepath.Join(home, d), 0o755))
	}
	must(t, os.Symlink(filepath.Join(home, "dotfiles/codex"), filepath.Join(home, ".codex")))
	tests := []struct {
		root   string
		config string // "" for no refusal
	}{
		{".claude", ".claude"},
		{".claude/proj", ".claude"},
		{".config/git", ".config/git"},
		{".config/opencode", ".config/opencode"},
		{"dotfiles/codex/p", ".codex"}, // where the link ~/.codex leads
		{"dotfiles/codex", ".codex"},
		{"", "."},   // the home directory itself
		{"..", "."}, // above it
		{".config", ""},
		{"src/p", ""},
		{".claudex", ""},
		{"dotfiles", ""},
	}
	for _, tt := range tests {
		root := filepath.Clean(filepath.Join(home, tt.root))
		err := checkRoot(root)
		var ce *ConfigRootError
		switch {
		case tt.config == "" && err != nil:
			t.Errorf("checkRoot(~/%s) = %v, want nil", tt.root, err)
		case tt.config != "" && !errors.As(err, &ce):
			t.Errorf("checkRoot(~/%s) = %v, want a *ConfigRootError", tt.root, err)
		case tt.config != "" && ce.Config != filepath.Clean(filepath.Join(home, tt.config)):
			t.Errorf("checkRoot(~/%s) names %s, want ~/%s", tt.root, ce.Config, tt.config)
		}
	}
}
