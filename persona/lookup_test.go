package persona

import (
	"slices"
	"strings"
	"testing"
)

// TestDiagnosticsOfFailedOverride checks that a persona's diagnostics
// name the files that would have been it but do not load, in any layer:
// by file name or by id member, broken JSON, a wrong type, an unknown
// field, a whole-file rule, an override whose extends fails; and that
// they leave out the problems of unrelated files.
func TestDiagnosticsOfFailedOverride(t *testing.T) {
	base := `{"id": "rev", "intent": "review", "description": "base", "harness": "codex", "model": "m"}`
	tests := []struct {
		name  string
		files string
		want  []string // substrings, each expected in one line
	}{
		{
			name:  "inherit not a boolean",
			files: "-- project/rev.json --\n{\"id\": \"rev\", \"inherit\": \"no\"}\n",
			want:  []string{"project/rev.json:1:26: inherit: must be boolean", "project/rev.json: not used, since it does not load: rev comes from the base layer"},
		},
		{
			name:  "malformed JSON, by file name",
			files: "-- user/rev.json --\n{\"id\": \"rev\", \"description\": \"broken\"\n",
			want:  []string{"user/rev.json:2:1: invalid JSON", "user/rev.json: not used"},
		},
		{
			name:  "wrong type, by id member under another file name",
			files: "-- project/my-reviewer.json --\n{\"description\": 5, \"id\": \"rev\"}\n",
			want:  []string{"project/my-reviewer.json:1:17: description: must be string", "project/my-reviewer.json: not used"},
		},
		{
			name:  "unknown field",
			files: "-- project/rev.json --\n{\"id\": \"rev\", \"bogus\": 1}\n",
			want:  []string{"project/rev.json:1:15: unknown field 'bogus'", "project/rev.json: not used"},
		},
		{
			name:  "inherit false and not whole",
			files: "-- project/rev.json --\n{\"id\": \"rev\", \"inherit\": false}\n",
			want:  []string{`project/rev.json:1:15: "inherit": false takes nothing from a lower persona`, "project/rev.json: not used"},
		},
		{
			name:  "extends an unknown persona",
			files: "-- project/rev.json --\n{\"id\": \"rev\", \"extends\": \"nobody\"}\n",
			want:  []string{`project/rev.json: extends: extends unknown persona "nobody"`, "project/rev.json: not used"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := tt.files + "-- base/rev.json --\n" + base + "\n" +
				"-- project/other.json --\n{\"id\": \"other\", \"bogus\": 1}\n" +
				"-- base/rev-two.json --\n{\"id\": \"rev-two\", \"description\": 5}\n"
			cat, root := loadTree(t, files)
			p, ok := cat.Get("rev")
			if !ok {
				t.Fatalf("rev not loaded; errors %v", cat.Errors)
			}
			if p.Layer != "base" {
				t.Fatalf("rev from %s, want the base layer's", p.Layer)
			}
			var got []string
			for _, d := range cat.DiagnosticsOf(p) {
				got = append(got, strings.ReplaceAll(d, root+"/", ""))
			}
			for _, w := range tt.want {
				if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
					t.Errorf("DiagnosticsOf(rev) = %q, want a line with %q", got, w)
				}
			}
			for _, g := range got {
				if strings.Contains(g, "other.json") || strings.Contains(g, "rev-two.json") {
					t.Errorf("DiagnosticsOf(rev) has %q, about another persona", g)
				}
			}
		})
	}
}

func TestNamedID(t *testing.T) {
	tests := []struct{ data, want string }{
		{`{"id": "a", "description": "broken"`, "a"},
		{`{"tiers": {"best": {"id": "x"}}, "list": [1, [2]], "id": "b", `, "b"},
		{"\xef\xbb\xbf{\"id\": \"c\", \"x\": }", "c"},
		{`{"description": "x", `, ""},
		{`{"id": 5}`, ""},
		{`[{"id": "d"}]`, ""},
		{``, ""},
	}
	for _, tt := range tests {
		if got := namedID([]byte(tt.data)); got != tt.want {
			t.Errorf("namedID(%q) = %q, want %q", tt.data, got, tt.want)
		}
	}
}

// TestLookupUnknownSimilar: an id no layer defines is an *UnknownError
// naming the ids it was likely meant to be, which its hints say first.
func TestLookupUnknownSimilar(t *testing.T) {
	c := &Catalog{Personas: []*Persona{{ID: "code-reviewer"}, {ID: "debugger"}, {ID: "test-writer"}}}
	tests := []struct {
		ref, hint string
		similar   []string
	}{
		{ref: "reviewer", similar: []string{"code-reviewer"}, hint: "did you mean code-reviewer?"},
		{ref: "debuger@best", similar: []string{"debugger"}, hint: "did you mean debugger?"},
		{ref: "nobody", similar: nil, hint: "`workforce list` shows the personas of every layer"},
	}
	for _, tc := range tests {
		_, _, err := c.Lookup(tc.ref)
		ue, ok := err.(*UnknownError)
		if !ok {
			t.Fatalf("Lookup(%q) = %v, want an *UnknownError", tc.ref, err)
		}
		if !slices.Equal(ue.Similar, tc.similar) || ue.Hints()[0] != tc.hint {
			t.Errorf("Lookup(%q): similar %q, hints %q; want %q, first hint %q", tc.ref, ue.Similar, ue.Hints(), tc.similar, tc.hint)
		}
	}
}
