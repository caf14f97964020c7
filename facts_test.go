package main

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/persona"
)

// TestHelpNamesEveryHarness fails when the package doc or run's help
// leaves out a harness workforce runs: the package doc names each by its
// product name, run's help each one-shot mode (from the harness table)
// and each harness's instruction file.
func TestHelpNamesEveryHarness(t *testing.T) {
	products := map[string]string{
		persona.HarnessClaude: "Claude Code", persona.HarnessOpencode: "opencode",
		persona.HarnessCodex: "Codex", persona.HarnessGemini: "Gemini CLI",
	}
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(f.Doc.Text()), " ")
	desc := runCommand().Description
	for _, h := range persona.Harnesses {
		if p, ok := products[h]; !ok || !strings.Contains(doc, p) {
			t.Errorf("main.go's package doc does not name %s (%q)", h, p)
		}
		if m := harness.OneShotMode(h); m == "" || !strings.Contains(desc, m) {
			t.Errorf("run's help does not name %s's one-shot mode %q", h, m)
		}
		if !strings.Contains(desc, "("+h) && !strings.Contains(desc, ", "+h+")") {
			t.Errorf("run's help does not say which instruction file %s gets", h)
		}
	}
}
