package mount

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSealEnv(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	tree := filepath.Join(base, "home", "sessions", "s", "tree")
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	link := filepath.Join(base, "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      string
		want    string // "" means dropped
		changed bool
	}{
		{"the root itself", "VENV=" + root, "VENV=" + tree, true},
		{"below the root", "VIRTUAL_ENV=" + root + "/.venv", "VIRTUAL_ENV=" + tree + "/.venv", true},
		{"a list", "PATH=/usr/bin:" + root + "/bin:/bin", "PATH=/usr/bin:" + tree + "/bin:/bin", true},
		{"through a symlink", "PROJECT=" + link + "/sub", "PROJECT=" + tree + "/sub", true},
		{"a sibling sharing a prefix", "OTHER=" + root + "2/x", "OTHER=" + root + "2/x", false},
		{"a relative path", "REL=repo/sub", "REL=repo/sub", false},
		{"not a path", "TERM=xterm-256color", "TERM=xterm-256color", false},
		{"a URL", "URL=https://example.com/x", "URL=https://example.com/x", false},
		{"elsewhere", "HOME=" + base + "/home", "HOME=" + base + "/home", false},
		{"OLDPWD", "OLDPWD=/anywhere", "", true},
		{"GIT_DIR", "GIT_DIR=" + root + "/.git", "", true},
		{"GIT_WORK_TREE", "GIT_WORK_TREE=/elsewhere", "", true},
		{"an empty value", "EMPTY=", "EMPTY=", false},
		{"the home inside the project is the user's", "HOME=" + root, "HOME=" + root, false},
		{"a harness's configuration inside the project", "CODEX_HOME=" + root + "/.codex", "CODEX_HOME=" + root + "/.codex", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, changed := SealEnv([]string{tt.in}, root, tree)
			var want []string
			if tt.want != "" {
				want = []string{tt.want}
			}
			if len(out) == 0 {
				out = nil
			}
			if !reflect.DeepEqual(out, want) {
				t.Errorf("SealEnv(%q) = %q, want %q", tt.in, out, want)
			}
			if (len(changed) > 0) != tt.changed {
				t.Errorf("SealEnv(%q) reported %v, want a change: %v", tt.in, changed, tt.changed)
			}
		})
	}
	// PWD goes without a report: the harness package sets it.
	if out, changed := SealEnv([]string{"PWD=" + root + "/sub"}, root, tree); len(out) != 0 || len(changed) != 0 {
		t.Errorf("SealEnv(PWD) = %q, %v; want it left out silently", out, changed)
	}
}

// FuzzSealEnv checks that no element of a sealed value (a colon-separated
// list) names the root or a path below it, and that a value without such an
// element is kept as it is.
func FuzzSealEnv(f *testing.F) {
	for _, s := range []string{"/r", "/r/x", "/usr/bin:/r/bin", "/r2", "x:/r:/r/", "https://r", "", "/r/../r/a", "//r"} {
		f.Add(s)
	}
	const root, tree = "/r", "/h/s/tree"
	names := func(v string) bool {
		for _, p := range strings.Split(v, ":") {
			if filepath.IsAbs(p) {
				if _, in := within(root, filepath.Clean(p)); in {
					return true
				}
			}
		}
		return false
	}
	f.Fuzz(func(t *testing.T, v string) {
		out, _ := SealEnv([]string{"V=" + v}, root, tree)
		if len(out) != 1 {
			t.Fatalf("SealEnv dropped V")
		}
		got := strings.TrimPrefix(out[0], "V=")
		if names(got) {
			t.Fatalf("SealEnv(%q) = %q still names the root", v, got)
		}
		if !names(v) && got != v {
			t.Fatalf("SealEnv(%q) = %q, want it unchanged", v, got)
		}
	})
}
