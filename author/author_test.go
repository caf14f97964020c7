package author

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBrief(t *testing.T) {
	desc := "reviews SQL migrations."
	tests := []struct {
		name        string
		description *string
		target      Target
		want        []string
	}{
		{"described, cwd", &desc, Target{Dir: "/p/layer", Layer: "cwd"},
			[]string{"The new persona: reviews SQL migrations.", "installs it into /p/layer, the project's persona layer", "The project it is for is /proj"}},
		{"asked, user", nil, Target{Dir: "/h/personas", Layer: "user"},
			[]string{"First ask the user what the new persona should do.", "/h/personas, the user's persona layer"}},
		{"dir:2", nil, Target{Dir: "/two", Layer: "dir:2"}, []string{"a persona layer of the user's (dir:2)"}},
		{"library", nil, Target{Dir: "/c/personas", Layer: "library"}, []string{"the built-in catalog of this repository"}},
		{"path", nil, Target{Dir: "/x", Layer: "path"}, []string{"/x, a directory of personas"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Brief(tt.description, tt.target, "/proj")
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("brief %q lacks %q", got, w)
				}
			}
		})
	}
}

func TestStage(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		name  string
		write bool
		kept  bool
	}{
		{"nothing written: removed", false, false},
		{"a file written: kept", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stage, err := NewStage(home)
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Dir(stage) != filepath.Join(home, "create") {
				t.Fatalf("stage %s is not in <home>/create", stage)
			}
			written := filepath.Join(stage, "personas")
			if tt.write {
				if err := os.WriteFile(filepath.Join(written, "p.json"), []byte("{}"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			RemoveIfEmpty(stage, written)
			if _, err := os.Stat(stage); (err == nil) != tt.kept {
				t.Errorf("stage kept %v, want %v", err == nil, tt.kept)
			}
		})
	}
}

func TestCatalogPersonas(t *testing.T) {
	tests := []struct {
		name, file, content string
		want                bool
	}{
		{"the generator's line", "personas.go", "package personas\n\n//go:generate go run " + Generator + "\n", true},
		{"a comment, not a directive", "personas.go", "package personas\n\n// go:generate go run " + Generator + "\n", false},
		{"another generator", "other.go", "package personas\n\n//go:generate stringer -type T\n", false},
		{"not a Go file", "personas.txt", "//go:generate go run " + Generator + "\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, _ := filepath.EvalSymlinks(t.TempDir())
			for _, d := range []string{filepath.Join(root, ".git"), filepath.Join(root, "personas"), filepath.Join(root, "src")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(root, "personas", tt.file), []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			dir, ok := CatalogPersonas(filepath.Join(root, "src"))
			if dir != filepath.Join(root, "personas") || ok != tt.want {
				t.Errorf("got %s, %v; want %s, %v", dir, ok, filepath.Join(root, "personas"), tt.want)
			}
		})
	}
}
