package native

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportPack: the agents of every path in one pack, in the order
// found, each persona beside the agent it comes from; "inherit": false
// unless inherit; an agent two files define an error naming both.
func TestImportPack(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, name string) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("---\nname: "+name+"\ndescription: d\n---\n\nDo it.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	one, two := write("a/one.md", "one"), write("b/two.md", "two")
	again := write("c/one.md", "one")
	tests := []struct {
		name    string
		paths   []string
		inherit bool
		want    string // id:inherit, in order
		wantErr string
	}{
		{"none", nil, false, "", ""},
		{"in order, shadowing", []string{two, one}, false, "two:false one:false", ""},
		{"inheriting", []string{one}, true, "one:nil", ""},
		{"one agent twice", []string{one, two, again}, false, "", one + " and " + again + " both define agent one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, found, err := ImportPack(tt.paths, "claude", tt.inherit)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("ImportPack: %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(found) != len(p.Personas) {
				t.Fatalf("%d agents found, %d personas", len(found), len(p.Personas))
			}
			var got []string
			for i, in := range found {
				inherit := "nil"
				if in.Spec.Inherit != nil {
					inherit = map[bool]string{true: "true", false: "false"}[*in.Spec.Inherit]
				}
				if p.Personas[i].ID != in.Spec.ID {
					t.Errorf("persona %d is %s, its agent %s", i, p.Personas[i].ID, in.Spec.ID)
				}
				got = append(got, in.Spec.ID+":"+inherit)
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("ImportPack = %q, want %q", strings.Join(got, " "), tt.want)
			}
		})
	}
}
