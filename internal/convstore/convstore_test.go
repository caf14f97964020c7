package convstore

import (
	"slices"
	"testing"
)

// TestDir checks each harness's store as environments locate it.
func TestDir(t *testing.T) {
	home := map[string]string{"HOME": "/h"}
	moved := map[string]string{"HOME": "/h", "CLAUDE_CONFIG_DIR": "/c/", "CODEX_HOME": "/x", "XDG_DATA_HOME": "/d", "GEMINI_CLI_HOME": "/g/"}
	relative := map[string]string{"HOME": "/h", "CLAUDE_CONFIG_DIR": "c", "CODEX_HOME": "x", "XDG_DATA_HOME": "d", "GEMINI_CLI_HOME": "g"}
	for _, tt := range []struct {
		h                       string
		home, moved, relative   string
		relHome, noHome, moved2 string
	}{
		{"claude", "/h/.claude", "/c", "/h/.claude", "", "", "/c"},
		{"codex", "/h/.codex", "/x", "/h/.codex", "", "", "/x"},
		{"opencode", "/h/.local/share/opencode", "/d/opencode", "/h/.local/share/opencode", "", "", "/d/opencode"},
		{"gemini", "/h/.gemini", "/g/.gemini", "/h/.gemini", "", "", "/g/.gemini"},
	} {
		l, ok := Of(tt.h)
		if !ok || l.Harness != tt.h {
			t.Fatalf("Of(%s) = %+v, %v", tt.h, l, ok)
		}
		env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
		for _, c := range []struct {
			name string
			env  map[string]string
			want string
		}{
			{"home", home, tt.home},
			{"moved", moved, tt.moved},
			{"relative", relative, tt.relative},
			{"relative home", map[string]string{"HOME": "h"}, tt.relHome},
			{"no home", nil, tt.noHome},
			{"moved without a home", map[string]string{l.Var: moved[l.Var]}, tt.moved2},
		} {
			if got := l.Dir(env(c.env)); got != c.want {
				t.Errorf("%s: Dir(%s) = %q, want %q", tt.h, c.name, got, c.want)
			}
		}
	}
	if _, ok := Of("grok"); ok {
		t.Error("Of(grok) has a store")
	}
	var names []string
	for _, l := range Locations() {
		names = append(names, l.Harness)
	}
	if want := []string{"claude", "codex", "opencode", "gemini"}; !slices.Equal(names, want) {
		t.Errorf("Locations() = %q, want %q", names, want)
	}
}
