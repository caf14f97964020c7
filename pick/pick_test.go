package pick

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/benchtree"
	"github.com/seed-3bc194a6/workforce/persona"
)

func TestParseAnswer(t *testing.T) {
	str := func(s string) *string { return &s }
	tests := []struct {
		name, text string
		want       Answer
		err        string // part of the error; "" for none
	}{
		{"the line asked for", `{"persona": "code-reviewer", "confidence": "high", "reason": "A review."}`,
			Answer{Persona: str("code-reviewer"), Confidence: str("high"), Reason: "A review."}, ""},
		{"surrounding white space", " \n\t{\"persona\":\"a\",\"confidence\":\"medium\",\"reason\":\"\"}\n ",
			Answer{Persona: str("a"), Confidence: str("medium")}, ""},
		{"members in another order", `{"reason": "r", "confidence": "low", "persona": "a"}`,
			Answer{Persona: str("a"), Confidence: str("low"), Reason: "r"}, ""},
		{"no persona", `{"persona": null, "confidence": "low", "reason": "None fits."}`,
			Answer{Confidence: str("low"), Reason: "None fits."}, ""},
		{"empty", "  ", Answer{}, "empty"},
		{"prose", `I pick code-reviewer.`, Answer{}, "not one JSON object"},
		{"a code fence", "```json\n{\"persona\": \"a\", \"confidence\": \"high\", \"reason\": \"r\"}\n```", Answer{}, "more than one line"},
		{"two lines", "{\"persona\": \"a\",\n\"confidence\": \"high\", \"reason\": \"r\"}", Answer{}, "more than one line"},
		{"two objects", `{"persona": "a", "confidence": "high", "reason": "r"} {"persona": "b", "confidence": "high", "reason": "r"}`, Answer{}, "not one JSON object"},
		{"an array", `[{"persona": "a", "confidence": "high", "reason": "r"}]`, Answer{}, "not one JSON object"},
		{"null", `null`, Answer{}, "not one JSON object"},
		{"a member more", `{"persona": "a", "confidence": "high", "reason": "r", "then": "rm"}`, Answer{}, "member then"},
		{"a member twice", `{"persona": "a", "persona": "b", "confidence": "high", "reason": "r"}`, Answer{}, "not one JSON object"},
		{"persona missing", `{"confidence": "high", "reason": "r"}`, Answer{}, "no persona"},
		{"persona a number", `{"persona": 7, "confidence": "high", "reason": "r"}`, Answer{}, "neither a string nor null"},
		{"confidence missing", `{"persona": "a", "reason": "r"}`, Answer{}, "confidence"},
		{"confidence other", `{"persona": "a", "confidence": "certain", "reason": "r"}`, Answer{}, "confidence"},
		{"confidence a number", `{"persona": "a", "confidence": 0.9, "reason": "r"}`, Answer{}, "confidence"},
		{"confidence in capitals", `{"persona": "a", "confidence": "HIGH", "reason": "r"}`, Answer{}, "confidence"},
		{"reason missing", `{"persona": "a", "confidence": "high"}`, Answer{}, "reason"},
		{"reason null", `{"persona": "a", "confidence": "high", "reason": null}`, Answer{}, "reason"},
		{"invalid UTF-8", "{\"persona\": \"a\xff\", \"confidence\": \"high\", \"reason\": \"r\"}", Answer{}, "not one JSON object"},
		{"too long", `{"persona": "a", "confidence": "high", "reason": "` + strings.Repeat("x", MaxAnswer) + `"}`, Answer{}, "bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAnswer(tt.text)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q (answer %+v)", err, tt.err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(deref(got.Persona), got.Persona == nil, deref(got.Confidence), got.Reason) !=
				fmt.Sprint(deref(tt.want.Persona), tt.want.Persona == nil, deref(tt.want.Confidence), tt.want.Reason) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	ids := map[string]bool{"code-reviewer": true, "debugger": true}
	tests := []struct {
		name, text string
		match      bool
		persona    string // "" for none
		reason     string // part of the reason
	}{
		{"high", `{"persona": "debugger", "confidence": "high", "reason": "A crash."}`, true, "debugger", "A crash."},
		{"medium", `{"persona": "debugger", "confidence": "medium", "reason": "Maybe."}`, true, "debugger", "Maybe."},
		{"low is no match", `{"persona": "debugger", "confidence": "low", "reason": "Unsure."}`, false, "", "only low confidence in debugger: Unsure."},
		{"null", `{"persona": null, "confidence": "high", "reason": "Nothing."}`, false, "", "Nothing."},
		{"not a candidate", `{"persona": "root", "confidence": "high", "reason": "Trust me."}`, false, "", "the model named root, which is no persona"},
		{"a candidate by another case", `{"persona": "Debugger", "confidence": "high", "reason": "r"}`, false, "", "named Debugger"},
		{"a name with escapes", `{"persona": "a\u001b[2Jb", "confidence": "high", "reason": "r"}`, false, "", `named "a\033[2Jb"`},
		{"unreadable", `sure: debugger`, false, "", "the model's answer cannot be read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ans, ok := Decide(tt.text, ids)
			if ok != tt.match {
				t.Errorf("match %v, want %v (%+v)", ok, tt.match, ans)
			}
			if deref(ans.Persona) != tt.persona || (tt.persona == "") != (ans.Persona == nil) {
				t.Errorf("persona %v, want %q", ans.Persona, tt.persona)
			}
			if !strings.Contains(ans.Reason, tt.reason) {
				t.Errorf("reason %q, want it to contain %q", ans.Reason, tt.reason)
			}
		})
	}
}

// FuzzParseAnswer checks that no answer, however made, is taken as a
// match unless it is the JSON object asked for naming a candidate with
// confidence high or medium, and that a match names a candidate.
func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{
		`{"persona": "code-reviewer", "confidence": "high", "reason": "A review."}`,
		`{"persona": null, "confidence": "low", "reason": "None."}`,
		`{"persona": "x", "confidence": "medium", "reason": "r", "extra": 1}`,
		`{"persona": "code-reviewer", "persona": "x", "confidence": "high", "reason": "r"}`,
		"```json\n{\"persona\": \"code-reviewer\", \"confidence\": \"high\", \"reason\": \"r\"}\n```",
		`{"persona": "code-reviewer", "confidence": "high", "reason": "r"}garbage`,
		"{\"persona\": \"code-reviewer\\u0000\", \"confidence\": \"high\", \"reason\": \"r\"}",
		`[]`, `""`, `{}`, `{"persona": {}, "confidence": "high", "reason": "r"}`,
	} {
		f.Add(s)
	}
	ids := map[string]bool{"code-reviewer": true, "debugger": true}
	f.Fuzz(func(t *testing.T, text string) {
		ans, err := ParseAnswer(text)
		d, ok := Decide(text, ids)
		if err != nil {
			if ok || d.Persona != nil || d.Confidence != nil {
				t.Fatalf("an unreadable answer (%v) decided %+v, %v", err, d, ok)
			}
			return
		}
		if ans.Confidence == nil || (*ans.Confidence != "high" && *ans.Confidence != "medium" && *ans.Confidence != "low") {
			t.Fatalf("confidence %v read", ans.Confidence)
		}
		if strings.ContainsAny(strings.TrimSpace(text), "\r\n") || len(strings.TrimSpace(text)) > MaxAnswer {
			t.Fatalf("an answer of more than one short line was read: %q", text)
		}
		if !utf8.ValidString(ans.Reason) || (ans.Persona != nil && !utf8.ValidString(*ans.Persona)) {
			t.Fatalf("invalid UTF-8 read from %q", text)
		}
		// What was read must be what the text says, member by member.
		var again map[string]any
		if err := jsonv2.Unmarshal([]byte(strings.TrimSpace(text)), &again); err != nil || len(again) != 3 {
			t.Fatalf("read %+v from %q, which is not an object of three members (%v)", ans, text, err)
		}
		if ok {
			if d.Persona == nil || !ids[*d.Persona] || *d.Confidence == "low" {
				t.Fatalf("a match %+v that is no candidate, or of low confidence", d)
			}
		} else if d.Persona != nil {
			t.Fatalf("no match, but persona %q", *d.Persona)
		}
	})
}

func TestCandidatesBounded(t *testing.T) {
	long := strings.Repeat("word ", 200)
	cat := persona.LoadLayers([]persona.Layer{persona.FilesLayer("t", nil)})
	cat.Personas = []*persona.Persona{
		{ID: "a", Spec: &persona.Spec{Intent: long, Description: "first line\n\n  second\tline"}},
		{ID: "b", Spec: &persona.Spec{Intent: "review", Description: long}},
		{ID: "c", Spec: &persona.Spec{Intent: "héllo", Description: strings.Repeat("é", 500)}},
	}
	got := Candidates(cat)
	if len(got) != 3 {
		t.Fatalf("%d candidates, want 3", len(got))
	}
	if got[0].Description != "first line second line" {
		t.Errorf("description %q, want it on one line", got[0].Description)
	}
	for _, c := range got {
		if n := utf8.RuneCountInString(c.Intent); n > MaxIntent {
			t.Errorf("%s: intent of %d characters", c.ID, n)
		}
		if n := utf8.RuneCountInString(c.Description); n > MaxDescription {
			t.Errorf("%s: description of %d characters", c.ID, n)
		}
	}
	if !strings.HasSuffix(got[1].Description, "…") || utf8.RuneCountInString(got[2].Description) != MaxDescription {
		t.Errorf("cut descriptions %q, %q", got[1].Description, got[2].Description)
	}
	p := Prompt(strings.Repeat("t", 3*MaxTask), got)
	if !strings.HasPrefix(p, "Task:\n"+strings.Repeat("t", MaxTask)+"…\n\nCandidates") {
		t.Errorf("the task is not cut to %d bytes: %.60q", MaxTask, p)
	}
	if !strings.HasSuffix(p, "\n\nCandidates:\n- a ("+got[0].Intent+"): first line second line\n- b (review): "+got[1].Description+"\n- c (héllo): "+got[2].Description+"\n") {
		t.Errorf("prompt %q: want one line per candidate", p)
	}
}

func TestDescriptionBound(t *testing.T) {
	for _, tt := range []struct{ n, want int }{
		{0, MaxDescription}, {1, MaxDescription}, {250, MaxDescription}, {251, 119},
		{500, 60}, {750, MinDescription}, {1000, MinDescription}, {100000, MinDescription},
	} {
		if got := DescriptionBound(tt.n); got != tt.want {
			t.Errorf("DescriptionBound(%d) = %d, want %d", tt.n, got, tt.want)
		}
		if tt.n > 0 && tt.n*DescriptionBound(tt.n) > DescriptionBudget && DescriptionBound(tt.n) != MinDescription {
			t.Errorf("%d descriptions of %d characters pass the budget", tt.n, DescriptionBound(tt.n))
		}
	}
}

// TestResolvedMaps checks that each harness takes the call's persona
// as it is, nothing refused, with its system prompt and no tool it could
// use to write, run or reach the network.
func TestResolvedMaps(t *testing.T) {
	want := map[string][]string{
		persona.HarnessClaude:   {"--permission-mode dontAsk", "--disallowedTools Bash,Edit,Write,WebFetch,WebSearch,Read,Glob,Grep,LS,Task,TodoWrite,Skill"},
		persona.HarnessCodex:    {"--sandbox read-only", "--disable shell_tool", `web_search="disabled"`},
		persona.HarnessOpencode: {},
		persona.HarnessGemini:   {"--approval-mode default", "--policy "},
	}
	for _, h := range persona.Harnesses {
		t.Run(h, func(t *testing.T) {
			o := harness.Options{ConfigDir: t.TempDir(), Root: t.TempDir()}
			if h == persona.HarnessGemini {
				// A run's per-session gemini home, where the system
				// prompt goes.
				o.State = []string{"GEMINI_CLI_HOME=" + t.TempDir()}
			}
			inv, err := harness.PlanOneShot(Resolved(h, "m"), o, harness.OneShot{Task: "Task:\nx"})
			var ue *harness.UnmappedError
			if errors.As(err, &ue) || err != nil {
				t.Fatalf("PlanOneShot: %v", err)
			}
			argv := strings.Join(inv.Argv(), " ")
			for _, w := range want[h] {
				if !strings.Contains(argv, w) {
					t.Errorf("argv %q lacks %q", argv, w)
				}
			}
			if h == persona.HarnessGemini {
				var policy string
				for p, c := range inv.Files {
					if strings.HasSuffix(p, ".toml") {
						policy += c
					}
				}
				for _, tool := range []string{"run_shell_command", "replace", "write_file", "web_fetch", "google_web_search", "read_file", "glob", "grep_search", "list_directory", "invoke_agent", "write_todos", "activate_skill"} {
					if !strings.Contains(policy, "toolName = \""+tool+"\"\ndecision = \"deny\"") {
						t.Errorf("gemini's policy does not deny %s:\n%s", tool, policy)
					}
				}
				// And pick's own policy, every tool denied.
				dir := t.TempDir()
				args, err := harness.NoToolsArgs(h, dir)
				if err != nil || len(args) != 2 || args[0] != "--policy" {
					t.Fatalf("NoToolsArgs = %q, %v; want --policy FILE", args, err)
				}
				if b, err := os.ReadFile(args[1]); err != nil || !strings.Contains(string(b), "toolName = \"*\"\ndecision = \"deny\"") {
					t.Errorf("%s: %q, %v; want a rule denying every tool", args[1], b, err)
				}
			}
			if h == persona.HarnessOpencode {
				var cfg string
				for _, c := range inv.Files {
					cfg += c
				}
				for _, w := range []string{`"edit": "deny"`, `"bash": "deny"`, `"read": "deny"`, `"webfetch": "deny"`, `"task": "deny"`} {
					if !strings.Contains(cfg, w) {
						t.Errorf("opencode config lacks %s:\n%s", w, cfg)
					}
				}
			}
		})
	}
}

// BenchmarkPrompt measures the prompt pick sends with n personas over
// three layers (internal/benchtree, as list's benchmark): its size in
// bytes, reported as prompt-bytes (BENCHMARKS.md).
func BenchmarkPrompt(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("personas=%d", n), func(b *testing.B) {
			project, user, base, err := benchtree.Layers(b.TempDir(), n)
			if err != nil {
				b.Fatal(err)
			}
			cat := persona.LoadLayers([]persona.Layer{{Name: "project", Dir: project}, {Name: "user", Dir: user}, {Name: "dir:2", Dir: base}})
			if len(cat.Personas) != n {
				b.Fatalf("%d personas", len(cat.Personas))
			}
			task := "review the changes of this branch for security issues"
			var p string
			for b.Loop() {
				p = Prompt(task, Candidates(cat))
			}
			b.ReportMetric(float64(len(p)), "prompt-bytes")
			b.ReportMetric(float64(len(p)+len(SystemPrompt))/float64(n), "bytes/persona")
		})
	}
}

// deref is *p, or the zero value when p is nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

func TestChoose(t *testing.T) {
	for _, tc := range []struct {
		name, configured, model string
		installed               []string
		h, m                    string
		note                    string
		ok                      bool
	}{
		{"the default", "", "", []string{"claude", "opencode"}, "claude", DefaultModel, "", true},
		{"configured", "codex", "gpt-5-mini", []string{"claude", "codex"}, "codex", "gpt-5-mini", "", true},
		{"configured without a model", "codex", "", []string{"codex"}, "codex", persona.ModelInherit, "", true},
		{"opencode when claude is missing", "", "", []string{"opencode", "codex"}, "opencode", persona.ModelInherit,
			"the default harness claude is not installed; asking opencode, the first installed of claude, opencode, codex, gemini, on its own default model", true},
		{"claude when the configured one is missing", "gemini", "gemini-2.5-flash", []string{"codex", "claude"}, "claude", DefaultModel,
			"pick.harness gemini is not installed; asking claude", true},
		{"none", "", "", nil, "", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, m, note, ok := Choose(tc.configured, tc.model, func(h string) bool { return slices.Contains(tc.installed, h) })
			if h != tc.h || m != tc.m || ok != tc.ok || !strings.HasPrefix(note, tc.note) || (tc.note == "") != (note == "") {
				t.Errorf("Choose = %q, %q, %q, %v; want %q, %q, %q..., %v", h, m, note, ok, tc.h, tc.m, tc.note, tc.ok)
			}
		})
	}
}

func TestRunInputs(t *testing.T) {
	p := &persona.Persona{ID: "dbg", Spec: &persona.Spec{Inputs: map[string]persona.Input{
		"SYMPTOM": {Description: "what goes wrong"},
		"BASE":    {Default: new("main")},
		"TOKEN":   {Env: "DBG_TOKEN"},
	}}}
	env := func(k string) string { return map[string]string{"DBG_TOKEN": "t"}[k] }
	in, filled := RunInputs(p, "tests fail", nil, env)
	if in["SYMPTOM"] != "tests fail" || len(in) != 1 || len(filled) != 1 || filled[0] != "SYMPTOM" {
		t.Errorf("inputs %v, filled %v; want SYMPTOM from the task alone", in, filled)
	}
	in, filled = RunInputs(p, "tests fail", map[string]string{"SYMPTOM": "exit 1"}, env)
	if in["SYMPTOM"] != "exit 1" || len(filled) != 0 {
		t.Errorf("inputs %v, filled %v; want the given value kept", in, filled)
	}
}
