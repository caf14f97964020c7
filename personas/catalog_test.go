package personas_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/seed-3bc194a6/workforce/internal/catalog"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/personas"
)

// TestGeneratedFileIsCurrent fails when catalog_gen.go is stale: run
// go generate ./personas.
func TestGeneratedFileIsCurrent(t *testing.T) {
	files, err := catalog.Build(".")
	if err != nil {
		t.Fatal(err)
	}
	want, err := catalog.Render(catalog.Options{Package: "personas"}, files)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("catalog_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("catalog_gen.go is stale; run go generate ./personas")
	}
}

// TestCatalog checks the built-in personas: they load without a problem,
// there are at least four, each has all three tiers, and the tiers use all
// three harnesses.
func TestCatalog(t *testing.T) {
	cat := persona.LoadLayers([]persona.Layer{persona.BuiltinLayer(personas.Files)})
	if len(cat.Errors) > 0 || len(cat.Warnings) > 0 {
		t.Fatalf("errors %v, warnings %v", cat.Errors, cat.Warnings)
	}
	if len(cat.Personas) < 4 {
		t.Fatalf("%d built-in personas, want at least 4", len(cat.Personas))
	}
	harnesses := map[string]bool{}
	sidecars := 0
	for _, p := range cat.Personas {
		if got := p.Spec.TierNames(); len(got) != 3 {
			t.Errorf("%s has tiers %v, want all three", p.ID, got)
		}
		for _, tier := range persona.Tiers {
			r, err := p.Resolve(tier)
			if err != nil {
				t.Fatal(err)
			}
			harnesses[r.Harness] = true
			if sc := r.Sidecar(persona.ChannelFor(r.Harness)); sc.IsSet() {
				sidecars++
				if sc.Content == "" || sc.Path != "" {
					t.Errorf("%s@%s: sidecar not inlined: %+v", p.ID, tier, sc)
				}
			}
		}
	}
	if len(harnesses) != 3 {
		t.Errorf("harnesses used: %v, want claude, opencode and codex", harnesses)
	}
	if sidecars == 0 {
		t.Error("no built-in persona has a sidecar for its harness")
	}
}

// TestBuiltinSkills checks that a built-in persona carries a skill inline
// and that every built-in skill reads as a valid skill.
func TestBuiltinSkills(t *testing.T) {
	cat := persona.LoadLayers([]persona.Layer{persona.BuiltinLayer(personas.Files)})
	n := 0
	for _, p := range cat.Personas {
		for _, sk := range p.Spec.Skills {
			if len(sk.Files) == 0 {
				continue
			}
			c, err := persona.ReadSkill(sk)
			if err != nil {
				t.Errorf("%s: skill %s: %v", p.ID, sk.ID, err)
				continue
			}
			if c.Name != sk.ID {
				t.Errorf("%s: skill %s is named %s", p.ID, sk.ID, c.Name)
			}
			n++
		}
	}
	if n == 0 {
		t.Error("no built-in persona carries a skill")
	}
}
