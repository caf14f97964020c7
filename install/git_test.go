package install

import (
	"strings"
	"testing"
)

func TestParseGitSource(t *testing.T) {
	tests := []struct {
		source, url, ref string
		ok               bool
	}{
		{"git+file:///srv/p.git", "file:///srv/p.git", "", true},
		{"git+file:///srv/p.git#v1", "file:///srv/p.git", "v1", true},
		{"git+https://example.com/a/b.git#main", "https://example.com/a/b.git", "main", true},
		{"git+ssh://git@example.com/a/b.git#0123", "ssh://git@example.com/a/b.git", "0123", true},
		{"github:acme/personas", "https://github.com/acme/personas.git", "", true},
		{"github:acme/personas@v2", "https://github.com/acme/personas.git", "v2", true},
		{"github:acme/personas.git@main", "https://github.com/acme/personas.git", "main", true},
		{"github:acme", "", "", false},
		{"github:/x", "", "", false},
		{"github:a/b/c", "", "", false},
		{"git+", "", "", false},
		{"git+--upload-pack=x", "", "", false},
		{"git+file:///p.git#--orphan", "", "", false},
		{"./pack", "", "", false},
		{"@acme/pack", "", "", false},
	}
	for _, tt := range tests {
		url, ref, ok := ParseGitSource(tt.source)
		if url != tt.url || ref != tt.ref || ok != tt.ok {
			t.Errorf("ParseGitSource(%q) = %q, %q, %v; want %q, %q, %v", tt.source, url, ref, ok, tt.url, tt.ref, tt.ok)
		}
	}
}

// FuzzParseGitSource: what the parser accepts never reaches git as an
// option.
func FuzzParseGitSource(f *testing.F) {
	for _, s := range []string{"git+file:///p.git#v1", "github:a/b@c", "git+-x", "github:a/-b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		url, ref, ok := ParseGitSource(s)
		if !ok {
			return
		}
		if url == "" || strings.HasPrefix(url, "-") || strings.HasPrefix(ref, "-") {
			t.Fatalf("ParseGitSource(%q) = %q, %q", s, url, ref)
		}
	})
}
