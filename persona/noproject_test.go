package persona

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/seed-3bc194a6/workforce/internal/home"
)

// TestNoProject: with NoProject, a persona of the project layer is not
// the one looked up, the user's of the same id is; ProjectPersonas still
// names the project's files.
func TestNoProject(t *testing.T) {
	root := t.TempDir()
	hd := filepath.Join(root, "home")
	repo := filepath.Join(root, "repo")
	must(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o755))
	persona := func(model string) string {
		return `{"id": "editor", "intent": "test", "description": "d", "agentsMdContent": "x", "claudeMdContent": "x",
 "tiers": {"best": {"harness": "claude", "model": "` + model + `"}}}`
	}
	write(t, filepath.Join(repo, home.ProjectDir, "editor.json"), persona("project-model"))
	write(t, filepath.Join(repo, home.ProjectDir, "notes.txt"), "not a persona")
	write(t, filepath.Join(home.UserDir(hd), "editor.json"), persona("user-model"))

	for _, tt := range []struct {
		name      string
		noProject bool
		model     string
		layer     string
	}{
		{"project layer read", false, "project-model", LayerProject},
		{"project layer left out", true, "user-model", LayerUser},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{Dir: repo, Home: hd, NoProject: tt.noProject}
			cat, err := Load(opts)
			if err != nil {
				t.Fatal(err)
			}
			p, r, err := cat.Lookup("editor")
			if err != nil {
				t.Fatal(err)
			}
			if r.Model != tt.model || p.Layer != tt.layer {
				t.Errorf("Lookup(editor) = %s from %s, want %s from %s", r.Model, p.Layer, tt.model, tt.layer)
			}
			for _, l := range cat.Layers {
				if tt.noProject && l.Name == LayerProject {
					t.Errorf("layers hold the project's: %+v", cat.Layers)
				}
			}
			dir, files, err := ProjectPersonas(opts)
			if err != nil || dir != filepath.Join(repo, home.ProjectDir) || !slices.Equal(files, []string{"editor.json"}) {
				t.Errorf("ProjectPersonas() = %q, %q, %v; want the project layer and editor.json", dir, files, err)
			}
		})
	}
}
