package persona_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/seed-3bc194a6/workforce/persona"
)

func ExampleLoad() {
	home, _ := os.MkdirTemp("", "workforce-home")
	defer os.RemoveAll(home)
	dir := filepath.Join(home, "personas") // the default user layer
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, "reviewer.md"), []byte("Review the diff, not the file.\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "reviewer.json"), []byte(`{
  "id": "reviewer",
  "intent": "review",
  "description": "Reviews changes.",
  "claudeMd": "reviewer.md",
  "tiers": {"best": {"harness": "claude", "model": "claude-opus", "systemPrompt": "Review."}}
}`), 0o644)

	cat, err := persona.Load(persona.Options{Dir: home, Home: home})
	if err != nil {
		panic(err)
	}
	p, _ := cat.Get("reviewer")
	r, _ := p.Resolve("best")
	text, _ := r.Claude.Text()
	fmt.Println(p.Layer, r.Harness, r.Model, r.Claude.Mode)
	fmt.Print(text)
	// Output:
	// user claude claude-opus overwrite
	// Review the diff, not the file.
}
