package persona

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/internal/home"
)

// TestProjectTarget: an install goes into the project layer found from
// the working directory, or, without one, into where it goes under the
// project root (the nearest directory with .git, links resolved), or under
// the working directory itself outside any project.
func TestProjectTarget(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	hd := filepath.Join(base, "home")
	withLayer := filepath.Join(base, "with")
	repo := filepath.Join(base, "repo")
	loose := filepath.Join(base, "loose")
	for _, d := range []string{hd, filepath.Join(withLayer, ".git"), filepath.Join(withLayer, home.ProjectDir), filepath.Join(withLayer, "sub"), filepath.Join(repo, ".git"), filepath.Join(repo, "a", "b"), loose} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(repo, "a"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir, want string
	}{
		{"the project's layer", filepath.Join(withLayer, "sub"), filepath.Join(withLayer, home.ProjectDir)},
		{"a new layer at the root", filepath.Join(repo, "a", "b"), filepath.Join(repo, home.ProjectDir)},
		{"through a link", filepath.Join(base, "link", "b"), filepath.Join(repo, home.ProjectDir)},
		{"no project", loose, filepath.Join(loose, home.ProjectDir)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ProjectTarget(Options{Dir: tt.dir, Home: hd})
			if err != nil || got != tt.want {
				t.Errorf("ProjectTarget = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestWithProjectLayer: a project layer is put first only where the
// cascade has none.
func TestWithProjectLayer(t *testing.T) {
	user, proj := Layer{Name: LayerUser, Dir: "/u"}, Layer{Name: LayerProject, Dir: "/p"}
	tests := []struct {
		name   string
		layers []Layer
		want   []Layer
	}{
		{"none", nil, nil},
		{"no project layer", []Layer{user}, []Layer{{Name: LayerProject, Dir: "/new"}, user}},
		{"a project layer", []Layer{proj, user}, []Layer{proj, user}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WithProjectLayer(tt.layers, "/new"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("WithProjectLayer = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestFindAllFiles: the files of every argument, in order; arguments
// that name none at all an error naming them; the first argument's error
// as it is.
func TestFindAllFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a/x.json", "a/y.json", "b/z.json", "empty/notes.md"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		args    []string
		want    []string
		wantErr string
	}{
		{"none", nil, nil, ""},
		{"in order", []string{"b", "a"}, []string{filepath.Join(dir, "b/z.json"), filepath.Join(dir, "a/x.json"), filepath.Join(dir, "a/y.json")}, ""},
		{"nothing in them", []string{"empty"}, nil, "no *.json persona files in empty"},
		{"a bad pattern", []string{"a", "[x"}, nil, "[x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FindAllFiles(dir, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("FindAllFiles = %v, %v; want an error with %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("FindAllFiles = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
