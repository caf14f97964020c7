package toreport

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
)

// The bytes each conversion prints are held by the golden files of the
// command layer (TestReportGolden, through its JSON writer); these cases
// hold what JSON tells apart: nil stays nil, empty stays empty.
func TestNilAndEmpty(t *testing.T) {
	o := persona.Origin{Layer: "user", File: "/u.json"}
	tests := []struct {
		name      string
		got, want any
	}{
		{"Each of nil", Each([]persona.Origin(nil), Origin), []report.Origin(nil)},
		{"Each of empty", Each([]persona.Origin{}, Origin), []report.Origin{}},
		{"Each of one", Each([]persona.Origin{o}, Origin), []report.Origin{{Layer: "user", File: "/u.json"}}},
		{"Ptr of nil", Ptr((*persona.Origin)(nil), Origin), (*report.Origin)(nil)},
		{"Ptr of one", Ptr(&o, Origin), &report.Origin{Layer: "user", File: "/u.json"}},
		{"Provenance of nil", Provenance(nil), map[string][]report.Origin(nil)},
		{"Provenance of one", Provenance(persona.Provenance{"id": {o}}), map[string][]report.Origin{"id": {{Layer: "user", File: "/u.json"}}}},
		{"orEmpty of nil", orEmpty(nil), []string{}},
		{"orEmpty of one", orEmpty([]string{"a"}), []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got %#v, want %#v", tt.got, tt.want)
			}
		})
	}
}

// TestList: list's selection by id pattern, harness and tag, its rows
// (flat or tiered, the default tier's harness, [] for none), and the
// patterns that select nothing as errors.
func TestList(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"rev.json":  `{"id": "rev", "intent": "review", "description": "d", "tags": ["review", "go"], "harness": "codex", "model": "m"}`,
		"edit.json": `{"id": "edit", "intent": "edit", "description": "e", "defaultTier": "best", "tiers": {"best": {"harness": "claude", "model": "opus"}, "minimum": {"harness": "opencode", "model": "mini"}}}`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cat := persona.LoadLayers([]persona.Layer{{Name: "user", Dir: dir}})
	if len(cat.Errors) > 0 {
		t.Fatalf("the test's personas do not load: %v", cat.Errors)
	}
	ids := func(l report.List) (out []string) {
		for _, r := range l.Personas {
			out = append(out, r.ID)
		}
		return out
	}
	tests := []struct {
		name                      string
		patterns, harnesses, tags []string
		want                      []string
		err                       string
	}{
		{name: "all", want: []string{"edit", "rev"}},
		{name: "a pattern", patterns: []string{"r*"}, want: []string{"rev"}},
		{name: "a harness of another tier", harnesses: []string{"opencode"}, want: []string{"edit"}},
		{name: "a harness none runs", harnesses: []string{"gemini"}},
		{name: "a tag glob", tags: []string{"rev*"}, want: []string{"rev"}},
		{name: "a harness and a tag", harnesses: []string{"claude"}, tags: []string{"go"}},
		{name: "a pattern matching none", patterns: []string{"zz*"}, err: "zz*"},
		{name: "a tag none carries", tags: []string{"nope"}, err: "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := List(cat, tt.patterns, tt.harnesses, tt.tags)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("List = %v, want an error naming %q", err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(ids(got), tt.want) {
				t.Fatalf("List = %v, %v; want %v", ids(got), err, tt.want)
			}
		})
	}
	all, _ := List(cat, nil, nil, nil)
	want := []report.ListRow{
		{ID: "edit", Source: "user", Path: filepath.Join(dir, "edit.json"), Tiers: []string{"best", "minimum"}, DefaultTier: "best", Harness: "claude", Description: "e",
			Form: "tiered", Harnesses: []string{"claude", "opencode"}, Tags: []string{}},
		{ID: "rev", Source: "user", Path: filepath.Join(dir, "rev.json"), Tiers: all.Personas[1].Tiers, DefaultTier: all.Personas[1].DefaultTier, Harness: "codex",
			Description: "d", Form: "flat", Harnesses: []string{"codex"}, Tags: []string{"review", "go"}},
	}
	if !reflect.DeepEqual(all.Personas, want) {
		t.Errorf("rows\n%#v\nwant\n%#v", all.Personas, want)
	}
	if all.Personas[1].Tiers == nil {
		t.Errorf("a flat persona's tiers are null, want a list")
	}
}
