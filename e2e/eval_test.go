//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/report"
)

// fileStep makes the harness write content to rel with its own tool.
func fileStep(harness, rel, content string) step {
	switch harness {
	case "claude":
		return step{Tool: "Write", Args: map[string]any{"file_path": "{{cwd}}/" + rel, "content": content}}
	case "opencode":
		return step{Tool: "write", Args: map[string]any{"filePath": "{{cwd}}/" + rel, "content": content}}
	case "gemini":
		return step{Tool: "write_file", Args: map[string]any{"file_path": "{{cwd}}/" + rel, "content": content}}
	default:
		lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
		return step{Tool: "apply_patch", Args: map[string]any{"input": "*** Begin Patch\n*** Add File: " + rel + "\n+" + strings.Join(lines, "\n+") + "\n*** End Patch\n"}}
	}
}

// TestEval evaluates two personas, one on claude and one on codex, on a
// case whose check is the real `go test ./...` of a tiny module
// (testdata/eval/add: a test of Add, and no Add). Each harness talks to
// a scripted model that writes add.go: claude's right (a + b), codex's
// wrong (a * b). The check runs confined in each attempt's sandbox; the
// report says the claude persona passed and the codex one failed, with
// the check's exit status and output; the module is left as it was.
func TestEval(t *testing.T) {
	impl := map[string]string{"claude": "a + b", "codex": "a * b"}
	harnesses := []string{"claude", "codex"}
	envs := map[string]*scriptedEnv{}
	for _, h := range harnesses {
		src := "package add\n\n// Add adds.\nfunc Add(a, b int) int { return " + impl[h] + " }\n"
		envs[h] = newScriptedEnv(t, newScripted(fileStep(h, "add.go", src), step{Text: "done"}))
	}
	home := envs["claude"].home
	vars := setVar(envs["claude"].vars, "CODEX_HOME="+varOf(envs["codex"].vars, "CODEX_HOME"))
	vars = append(vars, "AGENT_WORKFORCE_HOME="+filepath.Join(home, ".agentworkforce", "workforce"))
	for _, h := range harnesses {
		writeOneShotPersona(t, home, "fixer-"+h, h, writerPermissions[h])
	}
	root, _ := filepath.EvalSymlinks(t.TempDir())
	mod := filepath.Join(root, "add")
	if err := os.CopyFS(mod, os.DirFS(filepath.Join("..", "testdata", "eval", "add"))); err != nil {
		t.Fatal(err)
	}
	cases := `personas: [fixer-claude, fixer-codex]
cases:
  - id: add
    task: make go test pass
    dir: add
    check: GOCACHE=/tmp/gocache GOTOOLCHAIN=local GOFLAGS=-count=1 go test ./...
    protect: ["*_test.go"]
    expect:
      changed: [add.go]
`
	if err := os.WriteFile(filepath.Join(root, "cases.yaml"), []byte(cases), 0o644); err != nil {
		t.Fatal(err)
	}
	vars = append(vars, "PWD="+root)
	out, code := runBatch(t, vars, root, "eval", "cases.yaml", "--id", "e2e", "--json", "--jobs", "2")
	if code != 0 {
		t.Errorf("exit %d, want 0: every attempt ran", code)
	}
	var doc struct {
		Personas []struct {
			Persona  string  `json:"persona"`
			Harness  string  `json:"harness"`
			Passed   int     `json:"passed"`
			PassRate float64 `json:"passRate"`
		} `json:"personas"`
		Attempts []struct {
			Persona string         `json:"persona"`
			Outcome string         `json:"outcome"`
			Result  *report.Result `json:"result"`
		} `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("eval --json: %v\n%s", err, out)
	}
	want := map[string]string{"fixer-claude": "pass", "fixer-codex": "fail"}
	if len(doc.Attempts) != 2 {
		t.Fatalf("%d attempts, want 2", len(doc.Attempts))
	}
	for _, a := range doc.Attempts {
		r := a.Result
		if a.Outcome != want[a.Persona] || r == nil || r.Attempt == nil || r.Attempt.Check == nil {
			t.Errorf("%s: outcome %s, result %+v; want %s with its check", a.Persona, a.Outcome, r, want[a.Persona])
			continue
		}
		c := r.Attempt.Check
		switch a.Persona {
		case "fixer-claude":
			if c.ExitCode != 0 || !strings.Contains(c.Output, "ok") {
				t.Errorf("fixer-claude: check exit %d:\n%s", c.ExitCode, c.Output)
			}
		case "fixer-codex":
			if c.ExitCode == 0 || !strings.Contains(c.Output, "FAIL") {
				t.Errorf("fixer-codex: check exit %d, want a failing go test:\n%s", c.ExitCode, c.Output)
			}
		}
		if !strings.Contains(r.Patch, "+func Add") {
			t.Errorf("%s: patch %q: want add.go's", a.Persona, r.Patch)
		}
	}
	for _, p := range doc.Personas {
		if rate := map[string]float64{"fixer-claude": 1, "fixer-codex": 0}[p.Persona]; p.PassRate != rate {
			t.Errorf("%s: pass rate %v, want %v", p.Persona, p.PassRate, rate)
		}
	}
	if _, err := os.Stat(filepath.Join(mod, "add.go")); !os.IsNotExist(err) {
		t.Errorf("add.go is in the module: nothing of an evaluation syncs back (%v)", err)
	}
}
