package persona

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeFiles writes files (path relative to dir: text) into dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFindFiles: a file, a directory's *.json files (not below it), a
// pattern's matches, each sorted and absolute; the arguments that name
// nothing are errors, an invalid pattern a *PatternError.
func TestFindFiles(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"p/b.json": "", "p/a.json": "", "p/notes.md": "", "p/sub/c.json": "", "empty/.keep": ""})
	abs := func(names ...string) (out []string) {
		for _, n := range names {
			out = append(out, filepath.Join(dir, filepath.FromSlash(n)))
		}
		return out
	}
	tests := []struct {
		arg  string
		want []string
		err  string
	}{
		{arg: "p/a.json", want: abs("p/a.json")},
		{arg: filepath.Join(dir, "p/b.json"), want: abs("p/b.json")},
		{arg: "p", want: abs("p/a.json", "p/b.json")},
		{arg: "empty"},
		{arg: "p/**/*.json", want: abs("p/a.json", "p/b.json", "p/sub/c.json")},
		{arg: "p/z*.json", err: `pattern "p/z*.json" matches no file`},
		{arg: "p/[a.json", err: "invalid pattern"},
		{arg: "missing.json", err: "missing.json: no such file or directory"},
	}
	for _, tt := range tests {
		got, err := FindFiles(dir, tt.arg)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("FindFiles(%q) = %q, %v; want an error with %q", tt.arg, got, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("FindFiles(%q) = %q, %v; want %q", tt.arg, got, err, tt.want)
		}
	}
	var pe *PatternError
	if _, err := FindFiles(dir, "p/[a.json"); !errors.As(err, &pe) {
		t.Errorf("FindFiles of an invalid pattern = %v, want a *PatternError", err)
	}
	if _, err := FindFiles("", "p"); err == nil || !strings.Contains(err.Error(), "no working directory") {
		t.Errorf("FindFiles of a relative path without a directory = %v, want an error", err)
	}
}

// TestValidate: the files given are checked over the layers, and only
// they; without files, every file of every layer, one that does not
// load as a persona and a layer that cannot be read included.
func TestValidate(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"user/ok.json":     `{"id": "ok", "intent": "review", "description": "d", "harness": "codex", "model": "m"}`,
		"user/broken.json": `{"id": "broken", `,
		"new/mine.json":    `{"id": "mine", "intent": "review", "description": "d", "harness": "codex", "model": "m", "bogus": 1}`,
		"new/fine.json":    `{"id": "fine", "intent": "review", "description": "d", "harness": "claude", "model": "m"}`,
	})
	user := []Layer{{Name: "user", Dir: filepath.Join(dir, "user")}}
	errFiles := func(v Validation) (out []string) {
		for _, d := range v.Errors {
			out = append(out, filepath.Base(d.File))
		}
		return out
	}
	mine, fine := filepath.Join(dir, "new/mine.json"), filepath.Join(dir, "new/fine.json")
	v := Validate(user, []string{fine, mine})
	if !slices.Equal(v.Files, []string{fine, mine}) || !slices.Equal(errFiles(v), []string{"mine.json"}) {
		t.Errorf("Validate of two files = files %q, errors %v; want both files, an error about mine.json only", v.Files, v.Errors)
	}
	// A layer that cannot be listed (a file, not a directory) is checked
	// too, as the file its error names.
	notDir := filepath.Join(dir, "new/fine.json")
	v = Validate(append(user, Layer{Name: "dir:1", Dir: notDir}), nil)
	want := []string{notDir, filepath.Join(dir, "user/broken.json"), filepath.Join(dir, "user/ok.json")}
	if !slices.Equal(v.Files, want) || !slices.Equal(errFiles(v), []string{"fine.json", "broken.json"}) {
		t.Errorf("Validate of the layers = files %q, errors %v; want %q, errors about fine.json and broken.json", v.Files, v.Errors, want)
	}
}
