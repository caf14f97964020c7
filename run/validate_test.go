package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/persona"
)

func TestModelProblems(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		// A Gemini model on claude, at the tier.
		"mixed.json": `{"id": "mixed", "intent": "x", "description": "x", "tiers": {"best": {"harness": "claude", "model": "gemini-2.5-pro"}, "minimum": {"harness": "codex", "model": "gpt-5-mini"}}}`,
		// A flat persona: one problem, not one per tier.
		"flat.json": `{"id": "flat", "intent": "x", "description": "x", "harness": "codex", "model": "claude-opus-4-1"}`,
		// Each model its harness's; a model of no known vendor.
		"fine.json": `{"id": "fine", "intent": "x", "description": "x", "tiers": {"best": {"harness": "claude", "model": "opus"}, "best-value": {"harness": "opencode", "model": "openai/gpt-5-mini"}, "minimum": {"harness": "codex", "model": "m"}}}`,
		// A gateway in the persona's env: claude reaches any model.
		"gateway.json": `{"id": "gateway", "intent": "x", "description": "x", "env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}, "tiers": {"best": {"harness": "claude", "model": "gpt-5"}}}`,
	}
	var paths []string
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	v := persona.Validate(nil, paths)
	if len(v.Errors) > 0 {
		t.Fatalf("the files do not load: %v", v.Errors)
	}
	ds := ModelProblems(v, []string{"HOME=" + dir, "PATH=/nowhere"})
	var got []string
	for _, d := range ds {
		got = append(got, d.Error())
	}
	want := []string{
		filepath.Join(dir, "flat.json") + ": model: flat@best: model claude-opus-4-1 is an Anthropic model, which codex cannot reach",
		filepath.Join(dir, "mixed.json") + ": tiers.best.model: mixed@best: model gemini-2.5-pro is a Google model, which claude cannot reach",
	}
	if len(got) != len(want) {
		t.Fatalf("ModelProblems = %q, want %d problems: %q", got, len(want), want)
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || strings.HasPrefix(g, w)
		}
		if !found {
			t.Errorf("ModelProblems = %q, want one starting %q", got, w)
		}
	}
}
