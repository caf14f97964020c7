package toreport

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/seed-3bc194a6/workforce/install"
	"github.com/seed-3bc194a6/workforce/native"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
)

// TestSources: each layer with the persona files of its directory (a
// relative one under the working directory), a directory that is not
// there as missing with none, the built-in layer with the count given;
// no layers an empty list, not null.
func TestSources(t *testing.T) {
	wd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(wd, "team"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a.json", "b.json", "notes.md"} {
		if err := os.WriteFile(filepath.Join(wd, "team", f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		layers []persona.Layer
		want   []report.Source
	}{
		{"none", nil, []report.Source{}},
		{"relative, missing, built-in", []persona.Layer{{Name: "project", Dir: "team"}, {Name: "user", Dir: filepath.Join(wd, "gone")}, {Name: "builtin"}},
			[]report.Source{
				{Name: "project", Dir: "team", Exists: true, Personas: 2},
				{Name: "user", Dir: filepath.Join(wd, "gone"), Exists: false, Personas: 0},
				{Name: "builtin", Exists: true, Personas: 7},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sources(tt.layers, wd, 7).Sources; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Sources = %#v, want %#v", got, tt.want)
			}
		})
	}
}

// TestExported: no files is nil (export's JSON prints null), a file that
// drops nothing has an empty list of dropped fields, its content the
// file's bytes.
func TestExported(t *testing.T) {
	d := native.Dropped{Field: "model", Value: "x", Why: "no such model"}
	tests := []struct {
		name  string
		files []native.ExportFile
		want  []report.Exported
	}{
		{"none", nil, nil},
		{"empty", []native.ExportFile{}, nil},
		{"two", []native.ExportFile{
			{Persona: "p", Tier: "best", Harness: "claude", Agent: "p-best", Path: "/a/p-best.md", Data: []byte("---\n")},
			{Persona: "p", Tier: "fast", Harness: "claude", Agent: "p-fast", Path: "/a/p-fast.md", Dropped: []native.Dropped{d}},
		}, []report.Exported{
			{Persona: "p", Tier: "best", Harness: "claude", Agent: "p-best", File: "/a/p-best.md", Dropped: []report.Dropped{}, Content: "---\n"},
			{Persona: "p", Tier: "fast", Harness: "claude", Agent: "p-fast", File: "/a/p-fast.md", Dropped: []report.Dropped{{Field: "model", Value: "x", Why: "no such model"}}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Exported(tt.files); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Exported = %#v, want %#v", got, tt.want)
			}
		})
	}
}

// TestImports: the agents an import made personas of, nil for none; a dry
// run's without a file; an install's each with its file in the target and
// the persona of its id it is laid over or hides.
func TestImports(t *testing.T) {
	found := []native.Imported{
		{Spec: &persona.Spec{ID: "a", Runtime: persona.Runtime{Harness: "claude"}}, Source: "/s/a.md"},
		{Spec: &persona.Spec{ID: "b", Runtime: persona.Runtime{Harness: "codex"}}, Source: "/s/b.toml"},
	}
	o := persona.Origin{Layer: "builtin", File: "b.json"}
	res := &install.Result{Target: "/t", Installed: []install.Installed{
		{ID: "b", File: "/t/b.json", Overrides: &o, Inherits: []string{"model"}},
		{ID: "a", File: "/t/a.json", Shadows: &o},
	}}
	ro := &report.Origin{Layer: "builtin", File: "b.json"}
	tests := []struct {
		name  string
		found []native.Imported
		res   *install.Result
		want  []report.Imported
	}{
		{"none", nil, nil, nil},
		{"dry run", found, nil, []report.Imported{{ID: "a", Harness: "claude", Source: "/s/a.md"}, {ID: "b", Harness: "codex", Source: "/s/b.toml"}}},
		{"installed", found, res, []report.Imported{
			{ID: "a", Harness: "claude", Source: "/s/a.md", File: "/t/a.json", Shadows: ro},
			{ID: "b", Harness: "codex", Source: "/s/b.toml", File: "/t/b.json", Overrides: ro, Inherits: []string{"model"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Imports(tt.found, tt.res); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Imports = %#v, want %#v", got, tt.want)
			}
		})
	}
}
