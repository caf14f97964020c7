package eval

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/report"
)

// lookup knows personas p and q, on claude by default; the hash names
// the persona and its tier.
func lookup(ref, h, model string) (Persona, error) {
	id, tier, _ := strings.Cut(ref, "@")
	if id != "p" && id != "q" {
		return Persona{}, fmt.Errorf("unknown persona %q", id)
	}
	if tier == "" {
		tier = "best"
	}
	if h == "" {
		h = "claude"
	}
	return Persona{ID: id, Tier: tier, Harness: h, Hash: "hash-" + id + "-" + tier + "-" + model, Layer: "user"}, nil
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLoad makes the matrix: cases × personas × harnesses × attempts,
// each a task with a safe unique id, the attempt's spec and the persona's
// hash; --persona and --attempts replace the file's.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "proj", "x"), "")
	writeFile(t, filepath.Join(dir, "cases.yaml"), `personas: [p]
attempts: 3
cases:
  - {id: a, task: t, dir: proj, check: "make test", protect: [tests/**], model: {codex: gpt}}
  - {id: b, task: t}
`)
	e, err := Load(Options{File: "cases.yaml", WorkDir: dir, Lookup: lookup})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Cells) != 6 || e.K != 3 || e.ID != batch.IDFor(filepath.Join(dir, "cases.yaml")) {
		t.Fatalf("Load: %d cells, k %d, id %s", len(e.Cells), e.K, e.ID)
	}
	c := e.Cells[0].Task
	if c.ID != "a.p.best.claude.1" || c.Persona != "p@best" || c.PersonaHash != "hash-p-best-" || c.Attempt.Check != "make test" ||
		c.Attempt.Protect[0] != "tests/**" || c.Task.Dir != "proj" || c.Dir != filepath.Join(dir, "proj") || c.Task.Harness != "" || c.ProjectDir(dir) != filepath.Join(dir, "proj") {
		t.Errorf("first task %+v", c)
	}
	e, err = Load(Options{File: "cases.yaml", WorkDir: dir, Lookup: lookup, Personas: []string{"p", "q@fast"}, Harnesses: []string{"claude", "codex"}, Attempts: 2, K: 1, ID: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, cell := range e.Cells {
		if !batch.SafeName(cell.Task.ID) || ids[cell.Task.ID] {
			t.Errorf("task id %q: not safe, or taken", cell.Task.ID)
		}
		ids[cell.Task.ID] = true
	}
	if len(e.Cells) != 2*4*2 || e.K != 1 || e.ID != "mine" || len(e.Personas) != 4 {
		t.Fatalf("Load with flags: %d cells, %d personas, k %d", len(e.Cells), len(e.Personas), e.K)
	}
	if cell := e.Cells[2]; cell.Task.Task.Harness != "codex" || cell.Task.Model != "gpt" || cell.Persona.Key() != "p@best/codex" || cell.Task.PersonaHash != "hash-p-best-gpt" {
		t.Errorf("on --harness codex: %+v", cell.Task)
	}
}

// TestLoadProblems lists what the file alone cannot say, with the
// file's own problems, all at once.
func TestLoadProblems(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cases.yaml"), `personas: [p, nobody]
cases:
  - {id: a, task: t, dir: missing}
  - {id: b, task: t, repo: https://example.com/r.git}
  - {id: c}
`)
	_, err := Load(Options{File: "cases.yaml", WorkDir: dir, Lookup: lookup})
	var fe *FileError
	if !errors.As(err, &fe) || fe.Count() != 4 {
		t.Fatalf("Load = %v, want 4 problems", err)
	}
	for _, want := range []string{`cases.yaml:1: personas[1]: unknown persona "nobody"`, "cases.yaml:3: cases[0] (id a): dir missing is not a directory",
		"cases.yaml:4: cases[1] (id b): repo and ref are for a queue", "cases.yaml:5: cases[2] (id c): task: missing"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Load error:\n%v\nwant it to hold %q", err, want)
		}
	}
}

// TestLoadCheck: what a case asks of a persona on this machine (its
// inputs, its model) is checked once a case and persona, a problem naming
// the case's line and the persona; not for a queue.
func TestLoadCheck(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cases.yaml"), "personas: [p, q]\nattempts: 3\ncases:\n  - {id: a, task: t}\n  - {id: b, task: t, model: m}\n")
	var checked []string
	check := func(ref, h, model string, inputs map[string]string) error {
		checked = append(checked, ref+"/"+model)
		if ref == "q" && model == "m" {
			return errors.New("q cannot reach m")
		}
		return nil
	}
	_, err := Load(Options{File: "cases.yaml", WorkDir: dir, Lookup: lookup, Check: check})
	var fe *FileError
	if !errors.As(err, &fe) || fe.Count() != 1 || !strings.Contains(err.Error(), "cases.yaml:5: cases[1] (id b): persona q@best/claude: q cannot reach m") {
		t.Errorf("Load = %v, want q's problem with case b", err)
	}
	if want := []string{"p/", "q/", "p/m", "q/m"}; !slices.Equal(checked, want) {
		t.Errorf("checked %v, want %v: once a case and persona", checked, want)
	}
	checked = nil
	remote := func(batch.Task) string { return "" }
	writeFile(t, filepath.Join(dir, "remote.yaml"), "personas: [q]\ncases:\n  - {id: b, task: t, repo: r, model: m}\n")
	if _, err := Load(Options{File: "remote.yaml", WorkDir: dir, Lookup: lookup, Check: check, Remote: remote}); err != nil || checked != nil {
		t.Errorf("Load for a queue = %v, checked %v: want no check", err, checked)
	}
}

// TestOpenFinish opens an evaluation's batch in <home>/evals/<id>/ and
// keeps its report and each attempt's files.
func TestOpenFinish(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dir, "cases.yaml"), "personas: [p]\ncases:\n  - {id: a, task: t, setup: s, check: c}\n")
	e, err := Load(Options{File: "cases.yaml", WorkDir: dir, Lookup: lookup, ID: "e1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Open(func() (string, error) { return home, nil }); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	id := e.Cells[0].Task.ID
	ts := run(report.StatusSucceeded, 0, "a.go")
	ts.Result.Attempt.Setup = &report.Step{Output: "setup out"}
	ts.Result.Attempt.Check.Output = "check out"
	ts.Result.Patch = "diff --git a/a.go b/a.go\n"
	rep, err := e.Finish(map[string]batch.TaskState{id: *ts})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Attempts[0].Outcome != report.OutcomePass {
		t.Errorf("outcome %q", rep.Attempts[0].Outcome)
	}
	edir := filepath.Join(home, "evals", "e1")
	for file, want := range map[string]string{"eval.json": `"hash": "hash-p-best-"`, "report.json": `"outcome": "pass"`,
		"tasks/" + id + "/result.json": `"status": "succeeded"`, "tasks/" + id + "/setup.txt": "setup out",
		"tasks/" + id + "/check.txt": "check out", "tasks/" + id + "/patch.diff": "diff --git"} {
		data, err := os.ReadFile(filepath.Join(edir, file))
		if err != nil || !strings.Contains(string(data), want) {
			t.Errorf("%s = %q, %v; want it to hold %q", file, data, err, want)
		}
	}
	// Finished again, the attempt's files are kept as they are; ended
	// anew, they are written again.
	ts.Result.Patch = "diff --git a/b.go b/b.go\n"
	ended := time.Now().Add(-time.Hour)
	ts.Finished = &ended
	if _, err := e.Finish(map[string]batch.TaskState{id: *ts}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(edir, "tasks", id, "patch.diff")); !strings.Contains(string(data), "a/a.go") {
		t.Errorf("patch.diff of an attempt kept since it ended = %q, want it as it was", data)
	}
	ended = time.Now().Add(time.Hour)
	if _, err := e.Finish(map[string]batch.TaskState{id: *ts}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(edir, "tasks", id, "patch.diff")); !strings.Contains(string(data), "a/b.go") {
		t.Errorf("patch.diff of an attempt that ended anew = %q, want the new patch", data)
	}
	got, err := ReadReport(home, "e1")
	if err != nil || got.ID != "e1" || len(got.Attempts) != 1 {
		t.Errorf("ReadReport = %+v, %v", got, err)
	}
	if _, err := ReadReport(home, "nosuch"); err == nil || !strings.Contains(err.Error(), "no evaluation nosuch") {
		t.Errorf("ReadReport(nosuch) = %v", err)
	}
}

// TestTaskID: an attempt's task id is CASE.PERSONA.TIER.HARNESS.N, a
// safe name; one too long, or one two attempts would share, is the case's
// id and a hash of the whole.
func TestTaskID(t *testing.T) {
	used := map[string]bool{}
	p := Persona{ID: "p", Tier: "best", Harness: "claude"}
	if id := taskID(used, "fix", p, 2); id != "fix.p.best.claude.2" {
		t.Errorf("taskID = %q", id)
	}
	long := strings.Repeat("c", 100)
	id := taskID(used, long, p, 1)
	if !batch.SafeName(id) || !strings.HasPrefix(id, strings.Repeat("c", 80)+"-") {
		t.Errorf("taskID of a long case = %q, want a safe name: the case's id cut, and a hash", id)
	}
	// "a.b" by p and "a" by "b.p" meet as a.b.p.best.claude.1.
	first := taskID(used, "a.b", p, 1)
	second := taskID(used, "a", Persona{ID: "b.p", Tier: "best", Harness: "claude"}, 1)
	if first == second || !batch.SafeName(second) {
		t.Errorf("taskID: %q and %q, want two safe names", first, second)
	}
}
