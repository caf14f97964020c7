package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/author"
)

// createEnv makes a working directory wd in a repository, a workforce
// home whose config.json lists two persona directories, and a catalog
// repository; it returns the environment of a command run in wd and the
// paths.
func createEnv(t *testing.T) (env procEnv, wd, home, catalog string) {
	t.Helper()
	root, _ := filepath.EvalSymlinks(t.TempDir())
	repo := filepath.Join(root, "repo")
	wd = filepath.Join(repo, "src")
	home = filepath.Join(root, "home")
	catalog = filepath.Join(root, "catalog")
	for _, d := range []string{filepath.Join(repo, ".git"), wd, home, filepath.Join(catalog, ".git"), filepath.Join(catalog, "personas"), filepath.Join(repo, "personas")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(home, "config.json"):                 `{"personaDirs": ["one", "/abs/two"]}`,
		filepath.Join(catalog, "personas", "personas.go"):  "package personas\n\n//go:generate go run " + author.Generator + "\n",
		filepath.Join(repo, "personas", "personas.go"):     "package personas\n\n// go:generate go run " + author.Generator + "\n",
		filepath.Join(repo, "personas", "other.go"):        "package personas\n\n//go:generate stringer -type T\n",
		filepath.Join(catalog, "personas", "code.json"):    "{}",
		filepath.Join(repo, "personas", "README.md"):       "not a catalog",
		filepath.Join(catalog, "personas", "personas.txt"): "//go:generate go run " + author.Generator,
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return procEnv{Dir: wd, Home: home}, wd, home, catalog
}

func TestResolveCreateTarget(t *testing.T) {
	env, wd, home, catalog := createEnv(t)
	repo := filepath.Dir(wd)
	tests := []struct {
		name, choice, wd string
		dir, store       string
		err              string
	}{
		{"cwd: the project layer", "cwd", wd, filepath.Join(repo, ".agentworkforce/workforce/personas"), "cwd", ""},
		{"user: the first personaDirs entry", "user", wd, filepath.Join(home, "one"), "user", ""},
		{"dir:1", "dir:1", wd, filepath.Join(home, "one"), "dir:1", ""},
		{"dir:2", "dir:2", wd, "/abs/two", "dir:2", ""},
		{"dir:3: no such entry", "dir:3", wd, "", "", "personaDirs lists 2 directories, so there is no dir:3"},
		{"dir:0", "dir:0", wd, "", "", "dir:0 is not dir:N"},
		{"dir:x", "dir:x", wd, "", "", "dir:x is not dir:N"},
		{"dir:-1", "dir:-1", wd, "", "", "is not dir:N"},
		{"dir: with a huge N", "dir:99999999999999999999", wd, "", "", "is not dir:N"},
		{"library in a catalog repository", "library", filepath.Join(catalog, "personas"), filepath.Join(catalog, "personas"), "library", ""},
		{"library elsewhere", "library", wd, "", "", "library is the personas/ of a catalog repository, and " + filepath.Join(repo, "personas") + " is none"},
		{"a relative path", "../team", wd, filepath.Join(repo, "team"), filepath.Join(repo, "team"), ""},
		{"an absolute path", "/srv/personas/", wd, "/srv/personas", "/srv/personas", ""},
		{"a path named like a keyword", "./user", wd, filepath.Join(wd, "user"), filepath.Join(wd, "user"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := env
			e.Dir = tt.wd
			got, err := resolveCreateTarget(e, home, tt.choice)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q (target %+v)", err, tt.err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Dir != tt.dir || got.Store != tt.store {
				t.Errorf("got dir %q, store %q; want %q, %q", got.Dir, got.Store, tt.dir, tt.store)
			}
		})
	}
}

// FuzzResolveCreateTarget checks that any --save-in-directory value
// either is refused or names an absolute, clean directory, and that only
// the words cwd, user, library and dir:N name anything but a path.
func FuzzResolveCreateTarget(f *testing.F) {
	for _, s := range []string{"cwd", "user", "library", "dir:1", "dir:2", "dir:3", "dir:01", "dir:", "dir:1x", "../x", "/a//b/../c", "~/p", "dir:1/../2"} {
		f.Add(s)
	}
	root := f.TempDir()
	home := filepath.Join(root, "home")
	os.MkdirAll(home, 0o755)
	os.WriteFile(filepath.Join(home, "config.json"), []byte(`{"personaDirs": ["/one", "/two"]}`), 0o644)
	env := procEnv{Dir: filepath.Join(root, "wd"), Home: home}
	f.Fuzz(func(t *testing.T, choice string) {
		got, err := resolveCreateTarget(env, home, choice)
		if err != nil {
			return
		}
		if !filepath.IsAbs(got.Dir) || filepath.Clean(got.Dir) != got.Dir {
			t.Fatalf("%q resolved to %q", choice, got.Dir)
		}
		switch {
		case strings.HasPrefix(choice, "dir:"):
			if !slices.Contains([]string{"/one", "/two"}, got.Dir) {
				t.Fatalf("%q resolved to %q, no personaDirs entry", choice, got.Dir)
			}
		case choice == "user" || choice == "cwd" || choice == "library":
		default:
			if got.Layer != "path" || got.Store != got.Dir {
				t.Fatalf("%q resolved to %+v, not a path", choice, got)
			}
		}
	})
}
