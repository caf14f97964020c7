//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A persona means the same on every harness: the tests here run `workforce
// run` with each real harness against the scripted model and read, in the
// requests it records, what the harness made of the persona: the tools the
// model is offered, the reasoning effort and the model, and codex's
// sandbox. What was measured with claude 2.1.330, opencode 1.18.33 and
// codex 0.169.0:
//
// Tools offered. claude sends its tools in "tools" and names the deferred
// ones (WebFetch, WebSearch, MCP tools as mcp__SERVER__TOOL, ...) in a
// system text after "...before calling them:\n", one a line, up to a blank
// line; --disallowedTools removes a tool from both. opencode sends every
// tool in "tools", MCP tools as SERVER_TOOL. codex sends its built-in tools
// in "tools" and finds MCP tools with its client-side tool_search: after a
// tool_search_call, the next request carries a tool_search_output listing
// namespace mcp__SERVER and its tools.
//
// Effort: claude's output_config.effort (claude-opus-4-1, claude-sonnet-4-5
// and claude-haiku-4-5 get none, and think with thinking.budget_tokens,
// 31999 unless MAX_THINKING_TOKENS), opencode's reasoning_effort, codex's
// reasoning.effort. Model: "model" in each request. codex tells
// the model its sandbox in its permissions instructions: "`sandbox_mode`
// is `read-only`".

// mappingTree is the project the mapping tests run in.
const mappingTree = `
-- repo/.git/HEAD --
-- repo/main.go --
package main
`

// installPersona writes a persona file into the user layer of home.
func installPersona(t *testing.T, home, id, spec string) {
	t.Helper()
	dir := filepath.Join(home, ".agentworkforce", "workforce", "personas")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id+".json"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
}

// harnessArgsFor are the arguments after `workforce run ... --`: each
// harness non-interactive, with a one-word prompt (codex's prompt is the
// persona's system prompt when it has one, the last argument).
func harnessArgsFor(harness string, prompted bool) []string {
	switch harness {
	case "claude":
		return []string{"-p", "review"}
	case "opencode":
		return []string{"run", "review"}
	}
	if prompted {
		return []string{"exec", "--skip-git-repo-check"}
	}
	// Not "review": codex exec takes it for its review command.
	return []string{"exec", "--skip-git-repo-check", "go"}
}

// firstMain returns the first main request's body.
func firstMain(t *testing.T, s *scripted, out string) map[string]any {
	t.Helper()
	main := s.mainRequests()
	if len(main) == 0 {
		t.Fatalf("the harness sent no main request:\n%s", out)
	}
	var body map[string]any
	if err := json.Unmarshal(s.requests()[main[0]], &body); err != nil {
		t.Fatal(err)
	}
	return body
}

// deferredPattern finds claude's list of deferred tools.
var deferredPattern = regexp.MustCompile(`(?s)before calling them:\n(.*?)(?:\n\n|$)`)

// offered returns the tools the harness offers the model: the tools of
// its first main request, claude's deferred tools, and the MCP tools
// codex's tool_search found (as mcp__SERVER__TOOL).
func offered(s *scripted) []string {
	main := s.mainRequests()
	if len(main) == 0 {
		return nil
	}
	names := s.toolNames(main[0])
	for _, str := range stringsOf(s.requests()[main[0]]) {
		if m := deferredPattern.FindStringSubmatch(str); m != nil {
			names = append(names, strings.Split(strings.TrimSpace(m[1]), "\n")...)
		}
	}
	for _, b := range s.requests() {
		var body struct {
			Input []struct {
				Type  string
				Tools []struct {
					Name  string
					Tools []struct{ Name string }
				}
			}
		}
		json.Unmarshal(b, &body)
		for _, in := range body.Input {
			if in.Type != "tool_search_output" {
				continue
			}
			for _, ns := range in.Tools {
				for _, tool := range ns.Tools {
					if n := ns.Name + "__" + tool.Name; !slices.Contains(names, n) {
						names = append(names, n)
					}
				}
			}
		}
	}
	return names
}

// effortOf returns the reasoning effort of a request body.
func effortOf(harness string, body map[string]any) string {
	var v any
	switch harness {
	case "claude":
		v = dig(body, "output_config", "effort")
		if n, ok := dig(body, "thinking", "budget_tokens").(float64); ok && v == nil {
			// The models that take no effort think with a budget.
			v = fmt.Sprintf("budget %.0f", n)
		}
	case "opencode":
		// Chat completions' reasoning_effort; the Responses API's
		// reasoning.effort (opencode's openai provider).
		v = body["reasoning_effort"]
		if v == nil {
			v = dig(body, "reasoning", "effort")
		}
	default:
		v = dig(body, "reasoning", "effort")
	}
	s, _ := v.(string)
	return s
}

func dig(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

var sandboxPattern = regexp.MustCompile("`sandbox_mode` is `([a-z-]+)`")

// sandboxOf returns the sandbox codex told the model, or "".
func sandboxOf(body []byte) string {
	for _, str := range stringsOf(body) {
		if m := sandboxPattern.FindStringSubmatch(str); m != nil {
			return m[1]
		}
	}
	return ""
}

// mappingCase runs a persona on a real harness and says what the first
// main request must show.
type mappingCase struct {
	name, harness string
	// ref is what `workforce run` takes; spec, when set, is the persona
	// file installed as id.
	ref, id, spec string
	extra         []string // flags of workforce run before --
	prompted      bool     // the persona has a system prompt
	steps         []step
	// The request: tools that must and must not be offered, the effort
	// and the model, codex's sandbox.
	has, lacks             []string
	effort, model, sandbox string
}

// mcpPersona is a persona with the e2e MCP server (this test binary),
// denying its tool pong when deny is set.
func mcpPersona(t *testing.T, harness string, deny bool) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	perms := ""
	if deny {
		perms = `"permissions": {"deny": ["mcp__e2e__pong"]},`
	}
	return fmt.Sprintf(`{"id": "tools", "intent": "test", "description": "e2e MCP persona", %s
 "mcpServers": {"e2e": {"type": "stdio", "command": %q, "env": {%q: "1"}}},
 "tiers": {"best": {"harness": %q, "model": %q}}}`, perms, self, mcpEnv, harness, runModels[harness])
}

// editsPersona is a persona in acceptEdits mode, denying Edit and Write
// when deny is set.
func editsPersona(harness string, deny bool) string {
	perms := `{"mode": "acceptEdits"}`
	if deny {
		perms = `{"mode": "acceptEdits", "deny": ["Edit", "Write"]}`
	}
	return fmt.Sprintf(`{"id": "edits", "intent": "test", "description": "e2e edits persona", "permissions": %s,
 "tiers": {"best": {"harness": %q, "model": %q}}}`, perms, harness, runModels[harness])
}

// thinkPersona is a claude persona of model, reasoning low.
func thinkPersona(model string) string {
	return fmt.Sprintf(`{"id": "think", "intent": "test", "description": "e2e reasoning persona",
 "tiers": {"best": {"harness": "claude", "model": %q, "harnessSettings": {"reasoning": "low"}}}}`, model)
}

// mcpSearch makes codex search its deferred tools, which is how its MCP
// tools reach the model.
var mcpSearch = step{Tool: "tool_search", Args: map[string]any{"query": "e2e ping pong", "limit": 8}}

func mappingCases(t *testing.T) []mappingCase {
	return []mappingCase{
		// The built-in code-reviewer denies WebFetch; each tier names its
		// harness, model and reasoning.
		// (opencode offers GPT-5 models apply_patch instead of edit and
		// write.)
		{name: "code-reviewer@best-value/opencode", harness: "opencode", ref: "code-reviewer@best-value", prompted: true,
			has: []string{"bash", "read", "apply_patch"}, lacks: []string{"webfetch"}, effort: "medium", model: "gpt-5-mini"},
		{name: "no deny of WebFetch/opencode", harness: "opencode", id: "fetcher", spec: `{"id": "fetcher", "intent": "test", "description": "e2e control",
 "tiers": {"best": {"harness": "opencode", "model": "openai/gpt-5-mini"}}}`,
			has: []string{"webfetch"}, model: "gpt-5-mini"},
		{name: "code-reviewer@best/claude", harness: "claude", ref: "code-reviewer@best", prompted: true,
			has: []string{"Read", "Bash", "WebSearch"}, lacks: []string{"WebFetch"}, effort: "budget 31999", model: "claude-opus-4-1"},
		// claude's effort, or thinking budget, follows the persona's
		// reasoning (medium and 31999 when not given).
		{name: "reasoning low on claude-opus-4-5/claude", harness: "claude", id: "think", spec: thinkPersona("claude-opus-4-5"),
			effort: "low", model: "claude-opus-4-5"},
		{name: "reasoning low on claude-sonnet-4-5/claude", harness: "claude", id: "think", spec: thinkPersona("claude-sonnet-4-5"),
			effort: "budget 4000", model: "claude-sonnet-4-5"},
		{name: "code-reviewer@minimum/codex", harness: "codex", ref: "code-reviewer@minimum", prompted: true,
			has: []string{"exec_command"}, lacks: []string{"web_search"}, effort: "low", model: "gpt-5-nano", sandbox: "read-only"},
		// debugger@best-value runs codex with approvalPolicy on-failure,
		// which codex's --ask-for-approval refuses and its config takes.
		{name: "debugger@best-value/codex", harness: "codex", ref: "debugger@best-value", extra: []string{"--input", "SYMPTOM=it fails"}, prompted: true,
			has: []string{"exec_command", "web_search"}, effort: "medium", model: "gpt-5-mini", sandbox: "workspace-write"},

		// No edits: acceptEdits mode alone edits; denying Edit and Write
		// takes every edit tool away from opencode and claude, and gives
		// codex a read-only sandbox.
		{name: "acceptEdits/opencode", harness: "opencode", id: "edits", spec: editsPersona("opencode", false),
			has: []string{"edit", "write", "bash"}},
		{name: "no edits/opencode", harness: "opencode", id: "edits", spec: editsPersona("opencode", true),
			has: []string{"bash", "read"}, lacks: []string{"edit", "write", "apply_patch"}},
		{name: "acceptEdits/codex", harness: "codex", id: "edits", spec: editsPersona("codex", false),
			has: []string{"apply_patch"}, sandbox: "workspace-write"},
		{name: "no edits/codex", harness: "codex", id: "edits", spec: editsPersona("codex", true),
			sandbox: "read-only"},
		{name: "acceptEdits/claude", harness: "claude", id: "edits", spec: editsPersona("claude", false),
			has: []string{"Edit", "Write", "WebFetch"}},
		{name: "no edits/claude", harness: "claude", id: "edits", spec: editsPersona("claude", true),
			has: []string{"Read"}, lacks: []string{"Edit", "Write"}},

		// MCP servers reach each harness; a denied MCP tool is not offered
		// (and is without the deny).
		{name: "mcp/claude", harness: "claude", id: "tools", spec: mcpPersona(t, "claude", true),
			has: []string{"mcp__e2e__ping"}, lacks: []string{"mcp__e2e__pong"}},
		{name: "mcp without the deny/claude", harness: "claude", id: "tools", spec: mcpPersona(t, "claude", false),
			has: []string{"mcp__e2e__ping", "mcp__e2e__pong"}},
		{name: "mcp/opencode", harness: "opencode", id: "tools", spec: mcpPersona(t, "opencode", true),
			has: []string{"e2e_ping"}, lacks: []string{"e2e_pong"}},
		{name: "mcp without the deny/opencode", harness: "opencode", id: "tools", spec: mcpPersona(t, "opencode", false),
			has: []string{"e2e_ping", "e2e_pong"}},
		{name: "mcp/codex", harness: "codex", id: "tools", spec: mcpPersona(t, "codex", true), steps: []step{mcpSearch},
			has: []string{"mcp__e2e__ping"}, lacks: []string{"mcp__e2e__pong"}},
		{name: "mcp without the deny/codex", harness: "codex", id: "tools", spec: mcpPersona(t, "codex", false), steps: []step{mcpSearch},
			has: []string{"mcp__e2e__ping", "mcp__e2e__pong"}},
	}
}

// TestMapping runs personas with `workforce run` on each real harness and
// checks, in the requests the harness sends, that the tools it offers, the
// effort, the model and codex's sandbox are what the persona says. The
// runs are unconfined (--sandbox=off), where codex's own sandbox carries
// the persona's meaning; confined, codex's sandbox is off and ours carries
// it (TestMappingConfined).
func TestMapping(t *testing.T) {
	for _, c := range mappingCases(t) {
		t.Run(c.name, func(t *testing.T) {
			root := makeTree(t, mappingTree)
			dir := filepath.Join(root, "repo")
			s := newScripted(c.steps...)
			e := newScriptedEnv(t, s)
			ref := c.ref
			if c.spec != "" {
				installPersona(t, e.home, c.id, c.spec)
				ref = c.id
			}
			e.vars = workforceEnv(e, dir, root)
			argv := append(append([]string{workforce, "run", ref, "--sandbox=off"}, c.extra...), "--")
			out := e.run(t, dir, append(argv, harnessArgsFor(c.harness, c.prompted)...)...)
			body := firstMain(t, s, out)
			tools := offered(s)
			for _, n := range c.has {
				if !slices.Contains(tools, n) {
					t.Errorf("the model is not offered %s; offered %v", n, tools)
				}
			}
			for _, n := range c.lacks {
				if slices.Contains(tools, n) {
					t.Errorf("the model is offered %s, which the persona denies; offered %v", n, tools)
				}
			}
			if c.effort != "" {
				if got := effortOf(c.harness, body); got != c.effort {
					t.Errorf("effort %q, want %q", got, c.effort)
				}
			}
			if c.model != "" && body["model"] != c.model {
				t.Errorf("model %v, want %s", body["model"], c.model)
			}
			if c.sandbox != "" {
				if got := sandboxOf(s.requests()[s.mainRequests()[0]]); got != c.sandbox {
					t.Errorf("codex's sandbox %q, want %q", got, c.sandbox)
				}
			}
			if t.Failed() {
				t.Logf("workforce output:\n%s", out)
			}
		})
	}
}

// budgetTree has an AGENTS.md of nearly codex's whole default budget (32
// KiB), which extend mode folds before the persona's text.
func budgetTree() string {
	var b strings.Builder
	for i := 0; b.Len() < 31*1024; i++ {
		fmt.Fprintf(&b, "Repository rule %05d: keep the e2e budget test honest.\n", i)
	}
	return "\n-- repo/.git/HEAD --\n-- repo/AGENTS.md --\n" + b.String()
}

// budgetPersona is 4 KiB of persona text whose last line is lastLine.
const lastLine = "The last line of the persona: 7f3a-budget-intact."

func budgetText() string {
	var b strings.Builder
	for i := 0; b.Len() < 4*1024; i++ {
		fmt.Fprintf(&b, "Persona rule %03d: review like it matters.\n", i)
	}
	return b.String() + lastLine + "\n"
}

// TestCodexBudget: the repository's AGENTS.md plus the persona's text pass
// codex's 32 KiB budget; the persona's last line must still reach codex
// through workforce run (which gives codex a budget that holds the file).
// Run directly in a tree holding the same text, codex cuts it: the check
// can fail.
func TestCodexBudget(t *testing.T) {
	root := makeTree(t, budgetTree())
	dir := filepath.Join(root, "repo")
	s := newScripted()
	e := newScriptedEnv(t, s)
	spec, _ := json.Marshal(map[string]any{"id": "long", "intent": "test", "description": "e2e budget persona",
		"agentsMdContent": budgetText(), "agentsMdMode": "extend",
		"tiers": map[string]any{"best": map[string]any{"harness": "codex", "model": runModels["codex"]}}})
	installPersona(t, e.home, "long", string(spec))
	e.vars = workforceEnv(e, dir, root)
	out := e.run(t, dir, append([]string{workforce, "run", "long", "--"}, harnessArgsFor("codex", false)...)...)
	sent := instructionText("codex", firstMainStrings(s))
	if sent == "" {
		t.Fatalf("codex sent no AGENTS.md block:\n%s", out)
	}
	if !strings.Contains(sent, lastLine) {
		t.Errorf("the persona's last line did not reach codex; its AGENTS.md block ends:\n%s\nworkforce output:\n%s", sent[max(0, len(sent)-300):], out)
	}
	if !strings.Contains(sent, "Repository rule 00000") {
		t.Errorf("the repository's AGENTS.md did not reach codex")
	}

	// Directly, with the same text as its AGENTS.md and codex's default
	// budget, the last line is cut.
	real, err := os.ReadFile(filepath.Join(dir, "AGENTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	direct := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", direct).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(direct, "AGENTS.md"), []byte(string(real)+"\n\n---\n\n"+budgetText()), 0o644); err != nil {
		t.Fatal(err)
	}
	s2 := newScripted()
	e2 := newScriptedEnv(t, s2)
	e2.run(t, direct, append([]string{filepath.Join(binDir, "codex")}, harnessArgsFor("codex", false)...)...)
	if sent := instructionText("codex", firstMainStrings(s2)); sent == "" || strings.Contains(sent, lastLine) {
		t.Errorf("codex run directly kept the last line past its budget (or sent no AGENTS.md): the check cannot fail")
	}
}

// TestMappingConfined runs the codex cases of TestMapping confined (the
// default): codex's own sandbox is off (danger-full-access: its bubblewrap
// cannot start inside Landlock), whatever the persona's mode.
func TestMappingConfined(t *testing.T) {
	for _, c := range mappingCases(t) {
		if c.harness != "codex" || c.sandbox == "" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			root := makeTree(t, mappingTree)
			dir := filepath.Join(root, "repo")
			s := newScripted(c.steps...)
			e := newScriptedEnv(t, s)
			ref := c.ref
			if c.spec != "" {
				installPersona(t, e.home, c.id, c.spec)
				ref = c.id
			}
			e.vars = workforceEnv(e, dir, root)
			argv := append(append([]string{workforce, "run", ref}, c.extra...), "--")
			out := e.run(t, dir, append(argv, harnessArgsFor(c.harness, c.prompted)...)...)
			firstMain(t, s, out)
			if got := sandboxOf(s.requests()[s.mainRequests()[0]]); got != "danger-full-access" {
				t.Errorf("confined, codex's sandbox %q, want danger-full-access\n%s", got, out)
			}
		})
	}
}
