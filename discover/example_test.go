package discover_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/seed-3bc194a6/workforce/discover"
)

func ExampleChain() {
	repo, _ := os.MkdirTemp("", "repo")
	defer os.RemoveAll(repo)
	repo, _ = filepath.EvalSymlinks(repo)
	_ = os.Mkdir(filepath.Join(repo, ".git"), 0o755)
	_ = os.MkdirAll(filepath.Join(repo, "api"), 0o755)
	_ = os.WriteFile(filepath.Join(repo, "AGENTS.md"), []byte("Run make test.\n"), 0o644)
	_ = os.WriteFile(filepath.Join(repo, "api", "AGENTS.override.md"), []byte("Never edit generated code.\n"), 0o644)
	_ = os.WriteFile(filepath.Join(repo, "api", "AGENTS.md"), []byte("Shadowed by the override.\n"), 0o644)

	p, _ := discover.ForHarness("codex")
	res, err := discover.Chain(p, filepath.Join(repo, "api"), discover.Options{NoGlobals: true})
	if err != nil {
		panic(err)
	}
	for _, f := range res.Files {
		rel, _ := filepath.Rel(repo, f.Path)
		fmt.Println(f.Scope, rel)
	}
	// Output:
	// project AGENTS.md
	// project api/AGENTS.override.md
}
