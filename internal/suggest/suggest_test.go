package suggest

import (
	"slices"
	"testing"
	"unicode/utf8"
)

var personas = []string{"code-reviewer", "debugger", "persona-author", "test-writer"}

var flags = []string{"json", "jobs", "id", "events", "harness", "tier", "review", "root"}

func TestClosest(t *testing.T) {
	tests := []struct {
		name       string
		typed      string
		candidates []string
		want       []string
	}{
		{name: "a part of the id", typed: "reviewer", candidates: personas, want: []string{"code-reviewer"}},
		{name: "letters swapped", typed: "josn", candidates: flags, want: []string{"json"}},
		{name: "a letter dropped", typed: "debuger", candidates: personas, want: []string{"debugger"}},
		{name: "a letter added", typed: "test-writers", candidates: personas, want: []string{"test-writer"}},
		{name: "case", typed: "JSON", candidates: flags, want: []string{"json"}},
		{name: "nothing close", typed: "zzzz", candidates: personas, want: nil},
		{name: "empty", typed: "", candidates: personas, want: nil},
		{name: "no candidates", typed: "json", candidates: nil, want: nil},
		{name: "the name itself is not suggested", typed: "json", candidates: []string{"json", "jsons"}, want: []string{"jsons"}},
		{name: "typos before letters in order", typed: "rot", candidates: []string{"rotate", "root"}, want: []string{"root", "rotate"}},
		{name: "at most Max", typed: "ab", candidates: []string{"aa", "ba", "bb", "ac", "ad"}, want: []string{"aa", "ba", "bb"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Closest(tc.typed, tc.candidates); !slices.Equal(got, tc.want) {
				t.Errorf("Closest(%q, %q) = %q, want %q", tc.typed, tc.candidates, got, tc.want)
			}
		})
	}
}

func TestHint(t *testing.T) {
	tests := []struct {
		prefix string
		names  []string
		want   string
	}{
		{"--", []string{"json"}, "did you mean --json?"},
		{"", []string{"a", "b"}, "did you mean a or b?"},
		{"", []string{"a", "b", "c"}, "did you mean a, b or c?"},
		{"--", nil, ""},
	}
	for _, tc := range tests {
		if got := Hint(tc.prefix, tc.names); got != tc.want {
			t.Errorf("Hint(%q, %q) = %q, want %q", tc.prefix, tc.names, got, tc.want)
		}
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "ab", 2}, {"json", "josn", 1}, {"kitten", "sitting", 3}, {"ça", "ca", 1},
	}
	for _, tc := range tests {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// FuzzClosest: whatever is typed, Closest returns at most Max distinct
// candidates, never the name itself; distance is symmetric and zero only
// for equal strings.
func FuzzClosest(f *testing.F) {
	f.Add("reviewer", "code-reviewer")
	f.Add("josn", "json")
	f.Add("", "x")
	f.Add("\xff", "é")
	f.Fuzz(func(t *testing.T, typed, other string) {
		cands := append(slices.Clone(personas), other)
		got := Closest(typed, cands)
		if len(got) > Max {
			t.Fatalf("Closest(%q) = %q: more than %d", typed, got, Max)
		}
		seen := map[string]bool{}
		for _, g := range got {
			if g == typed || seen[g] || !slices.Contains(cands, g) {
				t.Fatalf("Closest(%q, %q) = %q", typed, cands, got)
			}
			seen[g] = true
		}
		if utf8.ValidString(typed) && utf8.ValidString(other) {
			d := distance(typed, other)
			if d != distance(other, typed) || (d == 0) != (typed == other) {
				t.Fatalf("distance(%q, %q) = %d, not symmetric or zero for different strings", typed, other, d)
			}
		}
	})
}
