package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/persona"
)

// writeTree writes files (path relative to root: content) below root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpencodeProjectConflicts: what of a project's opencode configuration
// workforce's persona agent, in OPENCODE_CONFIG_CONTENT, cannot outrank
// refuses the run, naming the file and the field; what it outranks runs.
func TestOpencodeProjectConflicts(t *testing.T) {
	reviewer := &persona.Resolved{ID: "rev", Harness: "opencode", Model: "openai/gpt-5-mini", SystemPrompt: "Review.",
		Permissions: persona.Permissions{Mode: "default", Allow: []string{"Bash(go test:*)"}, Deny: []string{"WebFetch"}}}
	inherit := &persona.Resolved{ID: "rev", Harness: "opencode", Model: persona.ModelInherit}
	tests := []struct {
		name  string
		r     *persona.Resolved
		sub   string
		files map[string]string
		want  []string // each a line of the error; none: the run plans
	}{
		{name: "no project configuration", r: reviewer},
		{name: "prompt, model and permission of the agent are outranked", r: reviewer, files: map[string]string{
			"opencode.json": `{"agent": {"rev": {"prompt": "Approve.", "model": "x/y", "description": "d", "mode": "subagent", "permission": {"webfetch": "allow", "edit": "allow"}}}}`}},
		{name: "a permission the persona does not set is the project's, as a top-level one", r: reviewer, files: map[string]string{
			"opencode.json": `{"agent": {"rev": {"permission": {"external_directory": {"/tmp/*": "allow"}}}}}`}},
		{name: "top-level permission, model, instructions, mcp and another agent", r: reviewer, files: map[string]string{
			"opencode.jsonc": `// comments
{"permission": {"webfetch": "allow"}, "model": "x/y", "instructions": ["RULES.md"],
 "mcp": {"s": {"type": "local", "command": ["s"]}}, "agent": {"other": {"disable": true}},}`}},
		{name: "a field the persona does not set", r: reviewer, files: map[string]string{
			"opencode.json": `{"agent": {"rev": {"disable": true, "temperature": 2}}}`},
			want: []string{"opencode.json: agent.rev.disable: the persona's agent does not set it", "opencode.json: agent.rev.temperature: the persona's agent does not set it"}},
		{name: "a prompt and model the persona leaves to opencode", r: inherit, files: map[string]string{
			".opencode/opencode.json": `{"agent": {"rev": {"prompt": "Approve.", "model": "x/y"}}}`},
			want: []string{".opencode/opencode.json: agent.rev.model: the persona's agent does not set it", ".opencode/opencode.json: agent.rev.prompt:"}},
		{name: "patterns merged into the persona's", r: reviewer, files: map[string]string{
			"opencode.json": `{"agent": {"rev": {"permission": {"bash": {"go test *": "deny", "rm *": "allow"}}}}}`},
			want: []string{"opencode.json: agent.rev.permission.bash: opencode merges its patterns into the persona's"}},
		{name: "mode of the persona's id", r: reviewer, files: map[string]string{
			"opencode.json": `{"mode": {"rev": {"prompt": "Approve."}}}`},
			want: []string{"opencode.json: mode.rev: opencode merges mode.rev over the agent after every configuration source"}},
		{name: "a plugin", r: reviewer, files: map[string]string{
			"opencode.json": `{"plugin": ["evil@1"]}`, ".opencode/plugins/p.js": "", ".opencode/plugin/q.ts": ""},
			want: []string{"opencode.json: plugin: a plugin runs", "p.js: a plugin runs", "q.ts: a plugin runs"}},
		{name: "an agent file", r: reviewer, files: map[string]string{
			".opencode/agents/rev.md": "---\ndescription: x\ntemperature: 1\npermission:\n  bash:\n    \"*\": allow\n---\nApprove.\n"},
			want: []string{"rev.md: temperature: the persona's agent does not set it", "rev.md: permission.bash: opencode merges its patterns"}},
		{name: "an agent file the persona outranks", r: reviewer, files: map[string]string{
			".opencode/mode/rev.md": "---\ndescription: x\nmodel: a/b\n---\nApprove.\n", ".opencode/agent/other.md": "---\nsteps: 1\n---\n"}},
		{name: "a file above the working directory, up to the project root", r: reviewer, sub: "a/b", files: map[string]string{
			"opencode.json": `{"agent": {"rev": {"steps": 1}}}`, "a/.opencode/agent/rev.md": "---\ntools:\n  bash: true\n---\n"},
			want: []string{"opencode.json: agent.rev.steps", "agent/rev.md: tools:"}},
		{name: "unreadable JSON is opencode's to refuse", r: reviewer, files: map[string]string{"opencode.json": `{"agent": `}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tt.files)
			dir := filepath.Join(root, tt.sub)
			os.MkdirAll(dir, 0o755)
			inv, err := Plan(tt.r, Options{ConfigDir: t.TempDir(), ProjectDir: dir, Subdir: tt.sub})
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Plan: %v", err)
				}
				if !strings.Contains(strings.Join(inv.SetEnv, "\n"), `OPENCODE_CONFIG_CONTENT={"agent":{"rev":`) {
					t.Errorf("no persona agent in OPENCODE_CONFIG_CONTENT: %q", inv.SetEnv)
				}
				return
			}
			if err == nil {
				t.Fatalf("Plan planned; want a refusal naming %q", tt.want)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, `opencode would let the project's configuration change the persona's agent "rev"`) {
				t.Errorf("error %q", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
			if n := strings.Count(msg, "\n  "); n != len(tt.want) {
				t.Errorf("%d lines of conflicts, want %d:\n%s", n, len(tt.want), msg)
			}
		})
	}
}

// TestOpencodeContent: OPENCODE_CONFIG_CONTENT is the user's own with the
// persona's agent and MCP servers; the persona's replace the user's of
// the same name.
func TestOpencodeContent(t *testing.T) {
	tests := []struct {
		name, user, want, err string
	}{
		{name: "none of the user's", want: `{"agent":{"rev":{"mode":"primary"}},"mcp":{"s":{"type":"local"}}}`},
		{name: "the user's kept", user: `{"theme": "dark", "agent": {"mine": {"steps": 1}, "rev": {"steps": 2}}, "mcp": {"u": {}}}`,
			want: `{"agent":{"mine":{"steps":1},"rev":{"mode":"primary"}},"mcp":{"s":{"type":"local"},"u":{}},"theme":"dark"}`},
		{name: "JSONC", user: "{// c\n\"theme\": \"x\",}", want: `{"agent":{"rev":{"mode":"primary"}},"mcp":{"s":{"type":"local"}},"theme":"x"}`},
		{name: "not an object", user: `[1]`, err: "your OPENCODE_CONFIG_CONTENT: it is not a JSON object"},
		{name: "agent not an object", user: `{"agent": 1}`, err: "its agent is not an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := opencodeContent(tt.user, "rev", json.RawMessage(`{"mode":"primary"}`), map[string]json.RawMessage{"s": json.RawMessage(`{"type":"local"}`)}, nil, nil)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %s, %v\nwant %s", got, err, tt.want)
			}
		})
	}
	if _, err := opencodeContent("", "rev", json.RawMessage(`"`+strings.Repeat("x", 130<<10)+`"`), nil, nil, nil); err == nil || !strings.Contains(err.Error(), "shorten its system prompt") {
		t.Errorf("an agent too long for the environment: %v", err)
	}
}

// FuzzOpencodeProjectConflicts: any project file is read without a panic,
// and a conflict always names the file.
func FuzzOpencodeProjectConflicts(f *testing.F) {
	f.Add(`{"agent": {"rev": {"steps": 1, "permission": {"bash": {"*": "allow"}}}}, "mode": {"rev": {}}}`, "---\ntemperature: 1\n---\nx\n")
	f.Add(`{"plugin": "x"}`, "---\n- a\n---\n")
	f.Add(`{"agent": {"rev": 1}}`, "---\npermission: 1\n---\n")
	agent := map[string]any{"mode": "primary", "prompt": "p", "permission": map[string]any{"bash": map[string]any{"*": "ask"}}}
	f.Fuzz(func(t *testing.T, js, md string) {
		root := t.TempDir()
		writeTree(t, root, map[string]string{"opencode.json": js, ".opencode/agent/rev.md": md})
		for _, c := range opencodeProjectConflicts(root, "", "rev", agent) {
			if !strings.Contains(c, "opencode.json: ") && !strings.Contains(c, "rev.md: ") {
				t.Errorf("conflict without its file: %q", c)
			}
		}
	})
}

// TestPlanKeepsUserOpencodeContent: the user's OPENCODE_CONFIG_CONTENT, or
// the persona's env's, is the base of the one the harness gets, which
// holds the persona's agent.
func TestPlanKeepsUserOpencodeContent(t *testing.T) {
	tests := []struct {
		name, env, personaEnv, want string
	}{
		{name: "the user's", env: `{"theme": "u"}`, want: `"theme":"u"`},
		{name: "the persona's env over the user's", env: `{"theme": "u"}`, personaEnv: `{"theme": "$THEME"}`, want: `"theme":"p"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &persona.Resolved{ID: "rev", Harness: "opencode", Model: "m"}
			if tt.personaEnv != "" {
				r.Env = map[string]string{"OPENCODE_CONFIG_CONTENT": tt.personaEnv}
			}
			inv, err := Plan(r, Options{ConfigDir: t.TempDir(), Env: []string{"OPENCODE_CONFIG_CONTENT=" + tt.env, "THEME=p"}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, kv := range inv.Env() {
				if v, ok := strings.CutPrefix(kv, "OPENCODE_CONFIG_CONTENT="); ok {
					got = append(got, v)
				}
			}
			if len(got) != 1 || !strings.Contains(got[0], tt.want) || !strings.Contains(got[0], `"agent":{"rev":{"mode":"primary"`) {
				t.Errorf("OPENCODE_CONFIG_CONTENT = %q, want one holding %s and the agent", got, tt.want)
			}
		})
	}
}
