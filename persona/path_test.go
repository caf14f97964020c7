package persona

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/internal/pathutil"
)

func TestValidatePath(t *testing.T) {
	tests := []struct {
		path    string
		wantErr string // substring; empty means valid
	}{
		{path: "persona.md"},
		{path: "docs/persona.md"},
		{path: "./persona.md"},
		{path: "a..b.md"},
		{path: "NOTES.MD"},
		{path: "", wantErr: "is empty"},
		{path: "../x.md", wantErr: `leaves the persona's directory with ".."`},
		{path: "docs/../../x.md", wantErr: `".."`},
		{path: "docs/..", wantErr: `".."`},
		{path: "/abs.md", wantErr: "is absolute"},
		{path: `\abs.md`, wantErr: "is absolute"},
		{path: `C:\x.md`, wantErr: "names a drive"},
		{path: "c:x.md", wantErr: "names a drive"},
		{path: `docs\x.md`, wantErr: "backslash"},
		{path: "notes.txt", wantErr: "does not name a .md file"},
		{path: ".md", wantErr: "does not name a .md file"},
		{path: "docs/", wantErr: "does not name a .md file"},
		{path: "x.md\x00", wantErr: "NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			err := ValidatePath(tt.path)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("ValidatePath(%q) = %v, want nil", tt.path, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("ValidatePath(%q) = %v, want error containing %q", tt.path, err, tt.wantErr)
			}
		})
	}
}

// FuzzValidatePath checks that every accepted path stays inside the
// directory it is joined to and names a .md file.
func FuzzValidatePath(f *testing.F) {
	for _, s := range []string{"persona.md", "../x.md", "/abs.md", `C:\x.md`, "notes.txt", "a/./b.md", "a/../b.md", "..md", "...md"} {
		f.Add(s)
	}
	dir := filepath.FromSlash("/base/personas")
	f.Fuzz(func(t *testing.T, p string) {
		if ValidatePath(p) != nil {
			return
		}
		joined := filepath.Join(dir, filepath.FromSlash(p))
		if !pathutil.Within(dir, joined) || joined == dir {
			t.Fatalf("ValidatePath(%q) accepted a path that leaves %s: %s", p, dir, joined)
		}
		if !strings.HasSuffix(strings.ToLower(joined), ".md") {
			t.Fatalf("ValidatePath(%q) accepted a path that is not a .md file: %s", p, joined)
		}
	})
}

func TestAnchor(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "personas")
	write(t, filepath.Join(dir, "here.md"), "here")
	write(t, filepath.Join(dir, "docs/deep.md"), "deep")
	write(t, filepath.Join(root, "outside.md"), "outside")
	must(t, os.Symlink(filepath.Join(root, "outside.md"), filepath.Join(dir, "escape.md")))
	must(t, os.Symlink("here.md", filepath.Join(dir, "inside-link.md")))
	must(t, os.Mkdir(filepath.Join(dir, "dir.md"), 0o755))
	file := filepath.Join(dir, "p.json")

	tests := []struct {
		name     string
		spec     Spec
		wantErr  string
		wantWarn string
		wantPath string // expected claudeMd after anchoring
	}{
		{name: "beside", spec: Spec{Runtime: Runtime{Sidecars: Sidecars{ClaudeMd: "here.md"}}}, wantPath: filepath.Join(dir, "here.md")},
		{name: "below", spec: Spec{Runtime: Runtime{Sidecars: Sidecars{ClaudeMd: "docs/deep.md"}}}, wantPath: filepath.Join(dir, "docs/deep.md")},
		{name: "symlink inside", spec: Spec{Runtime: Runtime{Sidecars: Sidecars{ClaudeMd: "inside-link.md"}}}, wantPath: filepath.Join(dir, "inside-link.md")},
		{name: "symlink escapes", spec: Spec{Runtime: Runtime{Sidecars: Sidecars{ClaudeMd: "escape.md"}}}, wantErr: "outside the persona directory"},
		{name: "directory", spec: Spec{Runtime: Runtime{Sidecars: Sidecars{ClaudeMd: "dir.md"}}}, wantErr: "not a regular file"},
		{name: "missing clears path and mode", spec: Spec{Runtime: Runtime{Sidecars: Sidecars{ClaudeMd: "gone.md", ClaudeMdMode: ModeExtend}}}, wantWarn: "sidecar file not found"},
		{name: "unsafe", spec: Spec{Runtime: Runtime{Sidecars: Sidecars{ClaudeMd: "../outside.md"}}}, wantErr: `".."`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec
			warns, err := Anchor(&spec, file)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Anchor() error = %v, want one containing %q", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), file) {
					t.Errorf("Anchor() error %q does not name the file %s", err, file)
				}
				return
			}
			if err != nil {
				t.Fatalf("Anchor() error = %v", err)
			}
			if tt.wantWarn != "" {
				if len(warns) != 1 || !strings.Contains(warns[0].Error(), tt.wantWarn) {
					t.Fatalf("Anchor() warnings = %v, want one containing %q", warns, tt.wantWarn)
				}
				if spec.ClaudeMd != "" || spec.ClaudeMdMode != "" {
					t.Errorf("missing sidecar left claudeMd=%q claudeMdMode=%q, want both cleared", spec.ClaudeMd, spec.ClaudeMdMode)
				}
				return
			}
			if spec.ClaudeMd != tt.wantPath {
				t.Errorf("claudeMd = %q, want %q", spec.ClaudeMd, tt.wantPath)
			}
		})
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(content), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
