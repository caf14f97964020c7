package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
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

// ownedNames are file and directory names whose owners keep them as
// constants or functions (session.ResultFile, session.OutputFile,
// session.EarlierOutputs, home.HarnessVersions, home.WorkerDir,
// home.CreateDir, ...): package main joins none of them itself.
var ownedNames = map[string]bool{
	`"result.json"`: true, `"stdout.jsonl"`: true, `"stderr.txt"`: true, `"harness-versions.json"`: true,
	`"cache"`: true, `"worker"`: true, `"create"`: true, `"results"`: true, `"sessions"`: true,
}

// TestNoOwnedFileNamesInMain fails when a file of package main builds a
// path with a name another package owns (ownedNames) as a literal.
func TestNoOwnedFileNamesInMain(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok || callName(c) != "filepath.Join" {
				return true
			}
			for _, a := range c.Args {
				if lit, ok := a.(*ast.BasicLit); ok && ownedNames[lit.Value] {
					t.Errorf("%s: package main joins %s into a path: use its owner's constant or function", fset.Position(lit.Pos()), lit.Value)
				}
			}
			return true
		})
	}
}
