package batch

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// problemLines are the lines of the problems of err, a Problems.
func problemLines(t *testing.T, err error) []int {
	t.Helper()
	var probs Problems
	if !errors.As(err, &probs) {
		t.Fatalf("error %v is not Problems", err)
	}
	var lines []int
	for _, p := range probs {
		lines = append(lines, p.Line)
	}
	return lines
}

// TestParseEveryProblem: Parse goes on past a wrong entry and returns
// every problem by line, one a line of its text, with the entries that
// have none.
func TestParseEveryProblem(t *testing.T) {
	for _, tt := range []struct {
		name, file, data string
		lines            []int
		valid            []string
		says             []string
	}{
		{name: "jsonl", file: "b.jsonl", data: strings.Join([]string{
			`{"id":"a","persona":"p","task":"t"}`,
			`not json`,
			`{"id":"b","persona":"p@","task":"t"}`,
			`{"id":"a","persona":"p","task":"t"}`,
			`{"id":"c","persona":"p","task":"t","x":1}`,
			`{"id":"d","persona":"p","task":"t"}`,
		}, "\n"), lines: []int{2, 3, 4, 5}, valid: []string{"a", "d"},
			says: []string{"b.jsonl:2: not a JSON object", `b.jsonl:3: task b: persona "p@"`, `b.jsonl:4: id "a" is taken by the task on line 1`, `b.jsonl:5: unknown field "x"`}},
		{name: "yaml", file: "b.yaml", data: "- id: a\n  persona: p\n  task: t\n  prompt: x\n  dir: [d]\n- id: b\n  persona: p\n- nope\n- id: c\n  persona: p\n  task: t\n",
			lines: []int{4, 5, 6, 8}, valid: []string{"c"},
			says: []string{`b.yaml:4: unknown field "prompt"`, "b.yaml:5: dir: want a string", "b.yaml:6: task b: task is missing", "b.yaml:8: a task must be a mapping"}},
		{name: "invalid id and a valid one", file: "b.jsonl", data: `{"persona":"p","task":"t"}` + "\n" + `{"persona":"p","task":"t"}` + "\n" + `{"id":"e","persona":"p","task":"t"}`,
			lines: []int{1, 2}, valid: []string{"e"}, says: []string{"b.jsonl:1: id is missing", "b.jsonl:2: id is missing"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tasks, err := Parse(tt.file, []byte(tt.data))
			if got := problemLines(t, err); !slices.Equal(got, tt.lines) {
				t.Errorf("problems on lines %v, want %v: %v", got, tt.lines, err)
			}
			var ids []string
			for _, x := range tasks {
				ids = append(ids, x.ID)
			}
			if !slices.Equal(ids, tt.valid) {
				t.Errorf("valid tasks %v, want %v", ids, tt.valid)
			}
			text := strings.Split(err.Error(), "\n")
			if len(text) != len(tt.says) {
				t.Fatalf("error text %q: want %d lines", err.Error(), len(tt.says))
			}
			for i, s := range tt.says {
				if !strings.HasPrefix(text[i], s) {
					t.Errorf("line %d of the error %q, want it to start %q", i+1, text[i], s)
				}
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != tt.lines[0] {
				t.Errorf("errors.As finds %v, want the first problem", pe)
			}
		})
	}
}

// TestLoadEveryProblem: Load lists the problems of the file's syntax and
// of what it names (persona, directory, harness, inputs) together, by
// line.
func TestLoadEveryProblem(t *testing.T) {
	dir := t.TempDir()
	data := strings.Join([]string{
		`{"id":"a","persona":"ghost","task":"t"}`,
		`{"id":"b","persona":"p","task":"t","timeout":"soon"}`,
		`{"id":"c","persona":"p","task":"t","dir":"web"}`,
		`{"id":"d","persona":"p","task":"t"}`,
		`{"id":"e","persona":"p","task":"t","harness":"vim"}`,
		`{"id":"f","persona":"needy","task":"t"}`,
		`{"id":"g","persona":"needy","task":"t","inputs":{"X":"1"}}`,
	}, "\n")
	if err := os.WriteFile(filepath.Join(dir, "t.jsonl"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	inputs := func(ref string, in map[string]string) error {
		if ref == "needy" && in["X"] == "" {
			return errors.New("persona needy needs input X")
		}
		return nil
	}
	_, tasks, err := Load(LoadOptions{File: "t.jsonl", WorkDir: dir, KnownHarnesses: []string{"claude"}, Harnesses: []string{"claude"}, Inputs: inputs,
		Catalog: func() (Lookup, error) {
			return func(ref string) (string, string, error) {
				if ref == "ghost" {
					return "", "", errors.New(`no persona "ghost"`)
				}
				return "best", "claude", nil
			}, nil
		}})
	var fe *FileError
	if !errors.As(err, &fe) || tasks != nil {
		t.Fatalf("Load = %v, %v; want a FileError and no tasks", tasks, err)
	}
	if got := problemLines(t, err); !slices.Equal(got, []int{1, 2, 3, 5, 6}) {
		t.Errorf("problems on lines %v, want 1, 2, 3, 5, 6: %v", got, err)
	}
	for _, want := range []string{"t.jsonl:6: task f: inputs: persona needy needs input X", `t.jsonl:1: task a: no persona "ghost"`, `t.jsonl:2: task b: timeout "soon"`, "t.jsonl:3: task c: dir web is not a directory", `t.jsonl:5: task e: unknown harness "vim"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestSetAside: a rerun moves the tasks' states to previous/, replacing
// an older one, and leaves none: every task runs as new.
func TestSetAside(t *testing.T) {
	home := t.TempDir()
	st, err := Open(home, "b")
	if err != nil {
		t.Fatal(err)
	}
	write := func(id string) {
		if err := st.WriteTask(TaskState{ID: id, Phase: PhaseDone}); err != nil {
			t.Fatal(err)
		}
	}
	write("first")
	if err := st.SetAside(); err != nil {
		t.Fatal(err)
	}
	write("second")
	if err := st.SetAside(); err != nil {
		t.Fatal(err)
	}
	states, err := st.ReadTasks([]string{"first", "second"})
	if err != nil || len(states) != 0 {
		t.Errorf("states after SetAside: %v, %v; want none", states, err)
	}
	prev, _ := filepath.Glob(filepath.Join(st.Dir, PreviousDir, "*", "state.json"))
	if len(prev) != 1 || filepath.Base(filepath.Dir(prev[0])) != "second" {
		t.Errorf("previous/ holds %v, want the last run's task only", prev)
	}
}
