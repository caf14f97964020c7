package run

import (
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/personas"
)

// TestVersion: the hash changes with the harness and the model a run is
// given, as the run's own (PersonaHash of its resolved persona) does, and
// an unknown persona or harness is an error.
func TestVersion(t *testing.T) {
	cat := persona.LoadLayers([]persona.Layer{persona.BuiltinLayer(personas.Files)})
	p, r, h0, err := Version(cat, "code-reviewer@best", "", "")
	if err != nil || p.ID != "code-reviewer" || h0 != PersonaHash(r) || h0 == "" {
		t.Fatalf("Version = %v, %v, %q, %v", p, r, h0, err)
	}
	_, r, h1, _ := Version(cat, "code-reviewer@best", "codex", "")
	_, _, h2, _ := Version(cat, "code-reviewer@best", "", "other-model")
	if r.Harness != "codex" || h1 == h0 || h2 == h0 || h1 == h2 {
		t.Errorf("hashes %s %s %s: want three", h0, h1, h2)
	}
	if _, _, _, err := Version(cat, "nobody", "", ""); err == nil {
		t.Error("an unknown persona has a version")
	}
	if _, _, _, err := Version(cat, "code-reviewer", "nosuch", ""); err == nil {
		t.Error("an unknown harness has a version")
	}
}

// TestCheckEntry: an input the persona has not, and a model its harness
// cannot reach, are refused before anything runs.
func TestCheckEntry(t *testing.T) {
	cat := persona.LoadLayers([]persona.Layer{persona.BuiltinLayer(personas.Files)})
	env := Env{Environ: []string{"PATH=/usr/bin"}}
	if err := CheckEntry(cat, "code-reviewer@best", "", "", nil, env); err != nil {
		t.Errorf("CheckEntry(code-reviewer@best) = %v", err)
	}
	if err := CheckEntry(cat, "code-reviewer@best", "", "", map[string]string{"NOSUCH": "x"}, env); err == nil || !strings.Contains(err.Error(), "inputs: ") {
		t.Errorf("CheckEntry with an unknown input = %v, want an inputs error", err)
	}
	if err := CheckEntry(cat, "code-reviewer@best", "codex", "claude-opus-4-5", nil, env); err == nil {
		t.Error("CheckEntry of a Claude model on codex = nil, want it refused")
	}
}
