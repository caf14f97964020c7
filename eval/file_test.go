package eval

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestParse reads a file with every field, in YAML and in JSON.
func TestParse(t *testing.T) {
	yml := `personas: [editor@best, reviewer]
attempts: 2
cases:
  - id: fix
    task: fix the bug
    dir: proj
    inputs: {A: "1"}
    model: {editor: m1, codex: m2}
    timeout: 5m
    setup: make deps
    check: make test
    protect: [tests/**]
    setupTimeout: 1m
    checkTimeout: 2m
    network: {mode: none}
    expect:
      status: failed
      changed: [src/*.go]
      unchanged: [docs/**]
      message: done
      maxCostUsd: 0.5
      maxDuration: 10m
      maxTurns: 20
  - id: two
    task: t
    model: m3
`
	js := `{"personas": ["editor@best", "reviewer"], "attempts": 2, "cases": [
 {"id": "fix", "task": "fix the bug", "dir": "proj", "inputs": {"A": "1"}, "model": {"editor": "m1", "codex": "m2"},
  "timeout": "5m", "setup": "make deps", "check": "make test", "protect": ["tests/**"], "setupTimeout": "1m", "checkTimeout": "2m",
  "network": {"mode": "none"},
  "expect": {"status": "failed", "changed": ["src/*.go"], "unchanged": ["docs/**"], "message": "done", "maxCostUsd": 0.5, "maxDuration": "10m", "maxTurns": 20}},
 {"id": "two", "task": "t", "model": "m3"}]}`
	for name, data := range map[string]string{"cases.yaml": yml, "cases.json": js} {
		f, err := Parse(name, []byte(data))
		if err != nil {
			t.Fatalf("Parse(%s): %v", name, err)
		}
		if len(f.Cases) != 2 || f.Attempts != 2 || len(f.Personas) != 2 {
			t.Fatalf("Parse(%s) = %+v", name, f)
		}
		c := f.Cases[0]
		e := c.Expect
		if c.ID != "fix" || c.Dir != "proj" || c.Inputs["A"] != "1" || c.ModelFor("editor", "claude") != "m1" || c.ModelFor("x", "codex") != "m2" ||
			c.ModelFor("x", "claude") != "" || c.Setup != "make deps" || c.Check != "make test" || c.Protect[0] != "tests/**" ||
			c.SetupTimeout != time.Minute || c.CheckTimeout != 2*time.Minute || c.Network == nil || c.Network.Mode != "none" {
			t.Errorf("Parse(%s): case %+v", name, c)
		}
		if e.Status != "failed" || e.Changed[0] != "src/*.go" || e.Unchanged[0] != "docs/**" || e.Message != "done" ||
			*e.MaxCostUSD != 0.5 || e.MaxDuration != 10*time.Minute || *e.MaxTurns != 20 {
			t.Errorf("Parse(%s): expect %+v", name, e)
		}
		if f.Cases[1].ModelFor("editor", "claude") != "m3" {
			t.Errorf("Parse(%s): one model for all: %+v", name, f.Cases[1])
		}
	}
}

// TestParseProblems checks each kind of problem: its line and field, and
// that a file's problems are all listed at once.
func TestParseProblems(t *testing.T) {
	tests := []struct {
		name, data string
		// want are substrings of the problems, in order.
		want []string
	}{
		{"not yaml", "cases: [\n", []string{"c.yaml:1: did not find expected node content"}},
		{"not a mapping", "- a\n", []string{"c.yaml:1: want a mapping with cases"}},
		{"no cases", "personas: [p]\n", []string{"c.yaml:1: cases is missing"}},
		{"cases not a list", "cases: x\n", []string{"c.yaml:1: cases: want a list"}},
		{"unknown top field", "case: []\ncases:\n  - {id: a, task: t}\n", []string{`c.yaml:1: unknown field "case"; want cases, personas, attempts`}},
		{"attempts", "attempts: 0\ncases:\n  - {id: a, task: t}\n", []string{`c.yaml:1: attempts: "0": want a whole number`}},
		{"persona ref", "personas: [\"a b\"]\ncases:\n  - {id: a, task: t}\n", []string{`c.yaml:1: personas[0]: "a b": want PERSONA or PERSONA@TIER`}},
		{"no id", "cases:\n  - task: t\n", []string{"c.yaml:2: cases[0]: id: missing"}},
		{"bad id", "cases:\n  - {id: -a, task: t}\n", []string{`c.yaml:2: cases[0]: id: "-a": want letters`}},
		{"duplicate id", "cases:\n  - {id: a, task: t}\n  - {id: a, task: t}\n", []string{"c.yaml:3: cases[1] (id a): id: taken by the case on line 2"}},
		{"no task", "cases:\n  - id: a\n", []string{"c.yaml:2: cases[0] (id a): task: missing or empty"}},
		{"unknown case field", "cases:\n  - id: a\n    task: t\n    tsk: x\n", []string{`c.yaml:4: cases[0] (id a): unknown field "tsk"`}},
		{"dir and repo", "cases:\n  - {id: a, task: t, dir: x, repo: y}\n", []string{"c.yaml:2: cases[0] (id a): dir and repo conflict"}},
		{"absolute dir", "cases:\n  - {id: a, task: t, dir: /x}\n", []string{`c.yaml:2: cases[0] (id a): dir: "/x": want a directory relative`}},
		{"timeout", "cases:\n  - {id: a, task: t, timeout: soon}\n", []string{`cases[0] (id a): timeout "soon"`}},
		{"setup not a string", "cases:\n  - id: a\n    task: t\n    setup: [x]\n", []string{"c.yaml:4: cases[0] (id a): setup: want a string"}},
		{"check timeout", "cases:\n  - id: a\n    task: t\n    checkTimeout: -1s\n", []string{`c.yaml:4: cases[0] (id a): checkTimeout: "-1s": want a positive duration`}},
		{"protect glob", "cases:\n  - id: a\n    task: t\n    protect: [\"../x\"]\n", []string{`c.yaml:4: cases[0] (id a): protect[0]: "../x": want a glob relative`}},
		{"network", "cases:\n  - id: a\n    task: t\n    network: {mode: wide}\n", []string{"c.yaml:4: cases[0] (id a): network.mode"}},
		{"model map", "cases:\n  - id: a\n    task: t\n    model: {codex: \"-x\"}\n", []string{`c.yaml:2: cases[0] (id a): model.codex: "-x"`}},
		{"expect status", "cases:\n  - id: a\n    task: t\n    expect:\n      status: ok\n", []string{`c.yaml:5: cases[0] (id a): expect.status: "ok": want one of`}},
		{"expect unknown", "cases:\n  - id: a\n    task: t\n    expect:\n      changd: [x]\n", []string{`c.yaml:5: cases[0] (id a): expect: unknown field "changd"`}},
		{"expect message", "cases:\n  - id: a\n    task: t\n    expect:\n      message: \"(\"\n", []string{"c.yaml:5: cases[0] (id a): expect.message: not a regular expression"}},
		{"expect cost", "cases:\n  - id: a\n    task: t\n    expect:\n      maxCostUsd: cheap\n", []string{`c.yaml:5: cases[0] (id a): expect.maxCostUsd: "cheap"`}},
		{"expect turns", "cases:\n  - id: a\n    task: t\n    expect:\n      maxTurns: 1.5\n", []string{`c.yaml:5: cases[0] (id a): expect.maxTurns: "1.5"`}},
		{"expect duration", "cases:\n  - id: a\n    task: t\n    expect:\n      maxDuration: 10\n", []string{`c.yaml:5: cases[0] (id a): expect.maxDuration: "10"`}},
		{"expect changed", "cases:\n  - id: a\n    task: t\n    expect:\n      changed: x\n", []string{"c.yaml:5: cases[0] (id a): expect.changed: want a list of strings"}},
		{"all at once", "attempts: x\ncases:\n  - {id: a}\n  - {id: b, task: t, timeout: x}\n", []string{"c.yaml:1: attempts", "c.yaml:3: cases[0] (id a): task", "c.yaml:4: cases[1] (id b)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(tt.data))
			var probs Problems
			if !errors.As(err, &probs) {
				t.Fatalf("Parse = %v, want Problems", err)
			}
			if len(probs) != len(tt.want) {
				t.Errorf("Parse: %d problems, want %d:\n%v", len(probs), len(tt.want), err)
			}
			for i, w := range tt.want {
				if i < len(probs) && !strings.Contains(probs[i].Error(), w) {
					t.Errorf("problem %d = %q, want it to hold %q", i, probs[i].Error(), w)
				}
			}
		})
	}
}

// FuzzParse feeds the parser any bytes: it never panics, and a file it
// takes has cases, each with an id and a task.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"cases:\n  - {id: a, task: t}\n", `{"cases": [{"id": "a", "task": "t", "expect": {"maxTurns": 3}}]}`,
		"cases:\n  - id: a\n    task: t\n    expect: {changed: ['**'], message: x, maxCostUsd: 1}\n", "personas: [a@b]\nattempts: 3\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("f.yaml", data)
		if err != nil {
			var probs Problems
			if !errors.As(err, &probs) || len(probs) == 0 {
				t.Fatalf("Parse error %v is not Problems", err)
			}
			return
		}
		if len(file.Cases) == 0 {
			t.Fatal("a file without cases was taken")
		}
		for _, c := range file.Cases {
			if c.ID == "" || strings.TrimSpace(c.Task) == "" {
				t.Fatalf("a case without an id or a task was taken: %+v", c)
			}
		}
	})
}

// TestExampleFile: the example the README's tour runs parses, and its
// directory is there.
func TestExampleFile(t *testing.T) {
	e, err := Load(Options{File: filepath.Join("..", "testdata", "eval", "cases.yaml"), Lookup: func(ref, h, model string) (Persona, error) {
		return Persona{ID: ref, Tier: "best", Harness: "claude"}, nil
	}})
	if err != nil || len(e.Cells) != 8 {
		t.Fatalf("Load(the example) = %v, %v; want 8 attempts", e, err)
	}
}
