package batch

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/internal/netspec"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, file, data string
		wantIDs          []string
		wantLine         int
		wantErr          string
	}{
		{name: "jsonl", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t"}` + "\n\n" + `{"id":"b","persona":"p@best","task":"u","dir":"x","inputs":{"K":"v"},"timeout":"5m"}`, wantIDs: []string{"a", "b"}},
		{name: "yaml", file: "b.yaml", data: "- id: a\n  persona: p\n  task: t\n- id: b\n  persona: p\n  task: u\n  inputs: {N: 3}\n", wantIDs: []string{"a", "b"}},
		{name: "jsonl by content", file: "tasks", data: `{"id":"a","persona":"p","task":"t"}`, wantIDs: []string{"a"}},
		{name: "yaml by content", file: "tasks", data: "- {id: a, persona: p, task: t}\n", wantIDs: []string{"a"}},
		{name: "duplicate", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t"}` + "\n" + `{"id":"a","persona":"p","task":"t"}`, wantLine: 2, wantErr: `id "a" is taken by the task on line 1`},
		{name: "missing id", file: "b.jsonl", data: `{"persona":"p","task":"t"}`, wantLine: 1, wantErr: "id is missing"},
		{name: "unsafe id", file: "b.jsonl", data: `{"id":"-rf","persona":"p","task":"t"}`, wantLine: 1, wantErr: `id "-rf"`},
		{name: "blank task", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"  "}`, wantLine: 1, wantErr: "task is missing or empty"},
		{name: "bad persona", file: "b.jsonl", data: `{"id":"a","persona":"p@","task":"t"}`, wantLine: 1, wantErr: "want PERSONA or PERSONA@TIER"},
		{name: "model", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t","model":"openai/gpt-5-mini"}`, wantIDs: []string{"a"}},
		{name: "model with a space", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t","model":"gpt 5"}`, wantLine: 1, wantErr: `task a: model "gpt 5": want a model's name`},
		{name: "model a flag", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t","model":"--help"}`, wantLine: 1, wantErr: `task a: model "--help": want a model's name`},
		{name: "NUL in the model", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t","model":"m\u0000"}`, wantLine: 1, wantErr: "task a: model holds a NUL byte"},
		{name: "bad timeout", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t","timeout":"-1s"}`, wantLine: 1, wantErr: "want a positive duration"},
		{name: "unknown field", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t","x":1}`, wantLine: 1, wantErr: `unknown field "x"`},
		{name: "wrong type", file: "b.jsonl", data: `{"id":"a","persona":"p","task":1}`, wantLine: 1, wantErr: "task: want a string, not a JSON number"},
		{name: "two values", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t"} {}`, wantLine: 1, wantErr: "more than one JSON value"},
		{name: "dir and repo", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t","dir":"d","repo":"r"}`, wantLine: 1, wantErr: "dir and repo conflict"},
		{name: "yaml not a list", file: "b.yaml", data: "id: a\n", wantLine: 1, wantErr: "want a list of tasks"},
		{name: "yaml unknown field", file: "b.yaml", data: "- id: a\n  persona: p\n  task: t\n  prompt: x\n", wantLine: 4, wantErr: `unknown field "prompt"`},
		{name: "yaml task a list", file: "b.yaml", data: "- id: a\n  persona: p\n  task:\n    - x\n", wantLine: 4, wantErr: "task: want a string"},
		{name: "yaml input a list", file: "b.yaml", data: "- id: a\n  persona: p\n  task: t\n  inputs:\n    K: [1]\n", wantLine: 5, wantErr: "inputs.K: want a string"},
		{name: "yaml entry line", file: "b.yaml", data: "- id: a\n  persona: p\n  task: t\n\n- id: b\n  persona: p\n", wantLine: 5, wantErr: "task b: task is missing"},
		{name: "empty", file: "b.jsonl", data: "\n", wantErr: "no tasks"},
		{name: "jsonl network", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t","network":{"mode":"none","allow":["a.com:443"],"presets":[]}}`, wantIDs: []string{"a"}},
		{name: "yaml network", file: "b.yaml", data: "- id: a\n  persona: p\n  task: t\n  network:\n    mode: allowlist\n    allow: [a.com, '*.b.org']\n    presets: []\n", wantIDs: []string{"a"}},
		{name: "jsonl network bad mode", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t","network":{"mode":"wide"}}`, wantLine: 1, wantErr: `task a: network.mode: unknown network mode "wide"`},
		{name: "jsonl network bad host", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t","network":{"allow":["a.com","x:0"]}}`, wantLine: 1, wantErr: `task a: network.allow[1]: network rule "x:0": port 0 is not between`},
		{name: "jsonl network unknown key", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t","network":{"hosts":[]}}`, wantLine: 1, wantErr: `unknown field "hosts"`},
		{name: "yaml network a string", file: "b.yaml", data: "- id: a\n  persona: p\n  task: t\n  network: open\n", wantLine: 4, wantErr: "network: want a mapping"},
		{name: "yaml network unknown key", file: "b.yaml", data: "- id: a\n  persona: p\n  task: t\n  network:\n    hosts: [a]\n", wantLine: 5, wantErr: `network: unknown field "hosts"`},
		{name: "yaml network bad preset", file: "b.yaml", data: "- id: a\n  persona: p\n  task: t\n  network:\n    presets: [all]\n", wantLine: 1, wantErr: `task a: network.presets[0]: unknown network preset "all"`},
		// A NUL byte cannot go in a program's argument: refused with the
		// file, never at the run's start.
		{name: "NUL in an input value", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t"}` + "\n" + `{"id":"b","persona":"p","task":"t","inputs":{"K":"v\u0000w"}}`, wantLine: 2, wantErr: "task b: inputs.K holds a NUL byte"},
		{name: "NUL in an odd input's value", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t","inputs":{"K\u001b":"\u0000"}}`, wantLine: 1, wantErr: `task a: inputs."K\x1b" holds a NUL byte`},
		{name: "NUL in an input name", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t","inputs":{"K\u0000":"v"}}`, wantLine: 1, wantErr: "task a: an input's name holds a NUL byte"},
		{name: "NUL in the task", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"fix\u0000it"}`, wantLine: 1, wantErr: "task a: task holds a NUL byte"},
		{name: "NUL in the persona", file: "b.jsonl", data: `{"id":"a","persona":"p\u0000","task":"t"}`, wantLine: 1, wantErr: "task a: persona holds a NUL byte"},
		{name: "NUL in the dir", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t","dir":"d\u0000"}`, wantLine: 1, wantErr: "task a: dir holds a NUL byte"},
		{name: "NUL in the harness", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t","harness":"claude\u0000"}`, wantLine: 1, wantErr: "task a: harness holds a NUL byte"},
		{name: "NUL in the repo", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t","repo":"https://example.com/r\u0000.git"}`, wantLine: 1, wantErr: "task a: repo holds a NUL byte"},
		{name: "NUL in the ref", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t","repo":"r","ref":"main\u0000"}`, wantLine: 1, wantErr: "task a: ref holds a NUL byte"},
		{name: "NUL in the timeout", file: "b.jsonl", data: `{"id":"a","persona":"p","task":"t","timeout":"5m\u0000"}`, wantLine: 1, wantErr: "task a: timeout holds a NUL byte"},
		{name: "yaml NUL in an input value", file: "b.yaml", data: "- id: a\n  persona: p\n  task: t\n  inputs:\n    K: \"v\\0\"\n", wantLine: 1, wantErr: "task a: inputs.K holds a NUL byte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tasks, err := Parse(tt.file, []byte(tt.data))
			if tt.wantErr != "" {
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Line != tt.wantLine || !strings.Contains(err.Error(), tt.wantErr) || pe.File != tt.file {
					t.Fatalf("Parse = %v, want an error on line %d with %q", err, tt.wantLine, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, tk := range tasks {
				ids = append(ids, tk.ID)
			}
			if strings.Join(ids, ",") != strings.Join(tt.wantIDs, ",") {
				t.Errorf("ids %v, want %v", ids, tt.wantIDs)
			}
		})
	}
}

func TestDigest(t *testing.T) {
	a := Task{ID: "a", Persona: "p", Task: "t", Inputs: map[string]string{"X": "1", "Y": "2"}, Line: 1}
	b := Task{ID: "a", Persona: "p", Task: "t", Inputs: map[string]string{"Y": "2", "X": "1"}, Line: 7}
	if a.Digest() != b.Digest() {
		t.Error("the digest depends on the line or on the inputs' order")
	}
	c := b
	c.Task = "t2"
	if c.Digest() == a.Digest() {
		t.Error("an edited task has the same digest")
	}
}

// FuzzParse checks that Parse never panics, that what it accepts is
// valid (ids safe and unique, tasks not blank), also next to problems, and
// that an error is every problem, by line, each naming the file and a line
// within it.
func FuzzParse(f *testing.F) {
	f.Add("b.jsonl", `{"id":"a","persona":"p","task":"t","inputs":{"K":"v"}}`)
	f.Add("b.yaml", "- id: a\n  persona: p@best\n  task: t\n  dir: x\n")
	f.Add("b.yaml", "- {id: a, persona: p, task: t}\n- {id: a, persona: p, task: t}\n")
	f.Add("tasks", "- id: &x a\n  persona: *x\n  task: t\n")
	f.Add("b.jsonl", "{\"id\":\"a\",\"task\":\"\u2028\"}\n{")
	f.Add("b.yaml", "- id: a\n  inputs: {K: [1]}\n")
	f.Add("b.jsonl", `{"id":"a","persona":"p","task":"t"}`+"\nnot json\n"+`{"id":"a","persona":"p","task":"t"}`)
	f.Add("b.yaml", "- id: a\n  persona: p\n  task: t\n  prompt: x\n- nope\n- id: b\n")
	f.Add("b.jsonl", `{"id":"a","persona":"p","task":"t","network":{"mode":"none","allow":["a.com:1","[::1]:2"],"presets":[]}}`)
	f.Add("b.yaml", "- id: a\n  persona: p\n  task: t\n  network: {mode: open, allow: ['*.b.org'], presets: [dev]}\n")
	f.Fuzz(func(t *testing.T, name, data string) {
		tasks, err := Parse(name, []byte(data))
		if err != nil {
			// Every problem, by line; the tasks without one are checked
			// below all the same.
			var probs Problems
			if !errors.As(err, &probs) || len(probs) == 0 {
				t.Fatalf("Parse error %v is not Problems", err)
			}
			for i, pe := range probs {
				if pe.File != name {
					t.Fatalf("Parse error %v does not name %q", pe, name)
				}
				// YAML breaks lines at \r, NEL, LS and PS too, and may name
				// the line after the last for what the file ends without
				// ("---" alone).
				if lines := strings.Count(data, "\n") + strings.Count(data, "\r") + strings.Count(data, "\u0085") + strings.Count(data, "\u2028") + strings.Count(data, "\u2029") + 2; pe.Line < 0 || pe.Line > lines || (i > 0 && pe.Line < probs[i-1].Line) {
					t.Fatalf("error line %d of a %d-line file, out of place or order: %v", pe.Line, lines, err)
				}
			}
		} else if len(tasks) == 0 {
			t.Fatal("Parse found no tasks and no problem")
		}
		seen := map[string]bool{}
		for _, tk := range tasks {
			if !SafeName(tk.ID) || seen[tk.ID] || strings.TrimSpace(tk.Task) == "" || tk.Validate() != nil || tk.Line < 1 {
				t.Fatalf("Parse accepted %+v", tk)
			}
			if tk.Network != nil {
				// The run gets the task's network whole, as a narrowing.
				args := Command("workforce", tk, "/p").Args
				i := slices.Index(args, "--network-narrow")
				var back netspec.Spec
				if i < 0 || json.Unmarshal([]byte(args[i+1]), &back) != nil || !reflect.DeepEqual(back, *tk.Network) && !(back.IsZero() && tk.Network.IsZero()) {
					t.Fatalf("task %+v: its run's arguments %q do not carry its network", tk, args)
				}
			}
			seen[tk.ID] = true
		}
	})
}

// TestCommandModel: a task's model reaches its run as --model; none
// gives no flag.
func TestCommandModel(t *testing.T) {
	tasks, err := Parse("b.jsonl", []byte(`{"id":"a","persona":"p","task":"t","harness":"codex","model":"gpt-5-mini"}`+"\n"+`{"id":"b","persona":"p","task":"t"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(Command("workforce", tasks[0], "/p").Args, " "); !strings.Contains(got, " --harness codex --model gpt-5-mini") {
		t.Errorf("Command(a).Args = %s, want --model gpt-5-mini", got)
	}
	if got := strings.Join(Command("workforce", tasks[1], "/p").Args, " "); strings.Contains(got, "--model") {
		t.Errorf("Command(b).Args = %s, want no --model", got)
	}
}

// TestCommandNetwork: a task's network reaches its run as
// --network-narrow, never as --network (which widens).
func TestCommandNetwork(t *testing.T) {
	tasks, err := Parse("b.yaml", []byte("- id: a\n  persona: p\n  task: t\n  network: {mode: none, presets: []}\n- id: b\n  persona: p\n  task: t\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(Command("workforce", tasks[0], "/p").Args, " ")
	if !strings.HasSuffix(got, ` --network-narrow {"mode":"none","presets":[]}`) || strings.Contains(got, "--network ") {
		t.Errorf("Command(a).Args = %s, want --network-narrow with the task's network", got)
	}
	if got := strings.Join(Command("workforce", tasks[1], "/p").Args, " "); strings.Contains(got, "--network") {
		t.Errorf("Command(b).Args = %s, want no network flag", got)
	}
}
