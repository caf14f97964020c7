package pathutil

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestWithin(t *testing.T) {
	tests := []struct {
		dir, path string
		want      bool
		rel       string
	}{
		{"/a/app", "/a/app", true, "."},
		{"/a/app", "/a/app/x.md", true, "x.md"},
		{"/a/app", "/a/app/d/x.md", true, "d/x.md"},
		{"/a/app", "/a/app2/x.md", false, ""},
		{"/a/app", "/a", false, ""},
		{"/", "/x", true, "x"},
		{"/", "/", true, "."},
	}
	for _, tt := range tests {
		if got := Within(tt.dir, tt.path); got != tt.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tt.dir, tt.path, got, tt.want)
		}
		if rel, ok := Rel(tt.dir, tt.path); ok != tt.want || rel != tt.rel {
			t.Errorf("Rel(%q, %q) = %q, %v, want %q, %v", tt.dir, tt.path, rel, ok, tt.rel, tt.want)
		}
	}
}

// FuzzRel checks Rel against filepath.Rel for clean absolute paths: inside
// when filepath.Rel does not climb, with the same relative path.
func FuzzRel(f *testing.F) {
	for _, s := range [][2]string{{"/a/app", "/a/app2"}, {"/", "/x"}, {"/a", "/a/b/c"}, {"/a/b", "/a"}, {"/a", "/a"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, dir, path string) {
		if strings.ContainsRune(dir+path, 0) {
			return
		}
		dir, path = filepath.Clean("/"+dir), filepath.Clean("/"+path)
		want, err := filepath.Rel(dir, path)
		if err != nil {
			t.Fatalf("filepath.Rel(%q, %q): %v", dir, path, err)
		}
		in := want != ".." && !strings.HasPrefix(want, "../")
		rel, ok := Rel(dir, path)
		if ok != in || (ok && rel != want) {
			t.Fatalf("Rel(%q, %q) = %q, %v; filepath.Rel says %q", dir, path, rel, ok, want)
		}
		if Within(dir, path) != ok {
			t.Fatalf("Within(%q, %q) = %v, Rel says %v", dir, path, !ok, ok)
		}
	})
}
