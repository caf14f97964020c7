package mount

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/internal/pathutil"
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
		{"the home inside the project", "HOME=" + root, "HOME=" + tree, true},
		{"a harness's configuration inside the project", "CODEX_HOME=" + root + "/.codex", "CODEX_HOME=" + tree + "/.codex", true},
		{"through a symlink, not there yet", "OUT=" + link + "/build/out", "OUT=" + tree + "/build/out", true},
		{"in a flag", "NODE_OPTIONS=--require=" + root + "/.pnp.cjs --max-old-space-size=4096", "NODE_OPTIONS=--require=" + tree + "/.pnp.cjs --max-old-space-size=4096", true},
		{"after a space", "GOFLAGS=-modfile " + root + "/go.alt.mod", "GOFLAGS=-modfile " + tree + "/go.alt.mod", true},
		{"a semicolon list", "L=a;" + root + "/x", "L=a;" + tree + "/x", true},
		{"a comma list", "L=" + root + "/a," + root + "/b", "L=" + tree + "/a," + tree + "/b", true},
		{"JSON", `J={"dir":"` + root + `"}`, `J={"dir":"` + tree + `"}`, true},
		{"a file URL", "U=file://" + root + "/x", "U=file://" + tree + "/x", true},
		{"not a path start", "X=/elsewhere" + root, "X=/elsewhere" + root, false},
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
	// The shell's logical directory names the project through a symlink:
	// other values spelled that way are sealed too.
	out, _ := SealEnv([]string{"PWD=" + link + "/sub", "OPT=--dir=" + link + "/sub/x"}, root, tree)
	if want := "OPT=--dir=" + tree + "/sub/x"; len(out) != 1 || out[0] != want {
		t.Errorf("SealEnv with an aliased PWD = %q, want [%q]", out, want)
	}
	// PWD goes without a report: the harness package sets it.
	if out, changed := SealEnv([]string{"PWD=" + root + "/sub"}, root, tree); len(out) != 0 || len(changed) != 0 {
		t.Errorf("SealEnv(PWD) = %q, %v; want it left out silently", out, changed)
	}
}

// FuzzSealEnv checks, with an oracle of its own, that no path in a sealed
// value names the root or a path below it: every run of path characters
// and slashes that starts with a slash, cleaned, is outside the root. A
// value that does not contain the root at all is kept as it is.
func FuzzSealEnv(f *testing.F) {
	for _, s := range []string{"/r", "/r/x", "/usr/bin:/r/bin", "/r2", "x:/r:/r/", "https://r", "", "/r/../r/a", "//r",
		"--x=//r/y", "a;/r", "{\"d\":\"/r\"}", "file:///r/x", "/x//r", "-I/r/include"} {
		f.Add(s)
	}
	const root, tree = "/r", "/h/s/tree"
	names := func(v string) string {
		start := -1
		for i := 0; i <= len(v); i++ {
			if i < len(v) && (pathChar(v[i]) || v[i] == '/') {
				if start < 0 {
					start = i
				}
				continue
			}
			if start >= 0 {
				tok := v[start:i]
				if tok[0] == '/' {
					if _, in := pathutil.Rel(root, filepath.Clean(tok)); in {
						return tok
					}
				}
				start = -1
			}
		}
		return ""
	}
	f.Fuzz(func(t *testing.T, v string) {
		out, _ := SealEnv([]string{"V=" + v}, root, tree)
		if len(out) != 1 {
			t.Fatalf("SealEnv dropped V")
		}
		got := strings.TrimPrefix(out[0], "V=")
		if tok := names(got); tok != "" && !strings.Contains(v, "/./") && !strings.Contains(v, "/../") && !strings.HasSuffix(v, "/..") && !strings.HasSuffix(v, "/.") {
			t.Fatalf("SealEnv(%q) = %q still names the root: %q", v, got, tok)
		}
		if !strings.Contains(v, root) && got != v {
			t.Fatalf("SealEnv(%q) = %q, want it unchanged", v, got)
		}
	})
}
