package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/persona"
)

// expect is what one harness makes of a row: every value applied (refused
// empty) or refused for a reason containing refused; and the effect:
// claude's and codex's arguments after the model, opencode's agent
// without its mode and model, as compact JSON.
type expect struct {
	refused string
	effect  string
}

func rules(field string, rs ...string) persona.Resolved {
	if field == FieldAllow {
		return persona.Resolved{Permissions: persona.Permissions{Allow: rs}}
	}
	return persona.Resolved{Permissions: persona.Permissions{Deny: rs}}
}

func withMCP(r persona.Resolved) persona.Resolved {
	r.MCPServers = map[string]persona.MCPServer{"docs": {Type: "stdio", Command: "docs-mcp"}}
	return r
}

const docsMCPArgs = ` -c mcp_servers.docs.command="docs-mcp"`
const docsMCPClaude = ` --mcp-config {"mcpServers":{"docs":{"type":"stdio","command":"docs-mcp"}}} --strict-mcp-config`

// TestMapping maps every rule form, mode and setting on each harness: what
// each applies, how, and what it refuses.
func TestMapping(t *testing.T) {
	tests := []struct {
		name                    string
		field                   string // the field whose values are checked
		r                       persona.Resolved
		claude, opencode, codex expect
	}{
		// Deny rules.
		{name: "deny Edit and Write", field: FieldDeny, r: rules(FieldDeny, "Edit", "Write"),
			claude:   expect{effect: "--disallowedTools Edit,Write"},
			opencode: expect{effect: `{"permission":{"edit":"deny"}}`},
			codex:    expect{effect: "--sandbox read-only"}},
		{name: "deny Edit alone", field: FieldDeny, r: rules(FieldDeny, "Edit"),
			claude:   expect{effect: "--disallowedTools Edit"},
			opencode: expect{effect: `{"permission":{"edit":"deny"}}`},
			codex:    expect{effect: "--sandbox read-only"}},
		{name: "deny Write alone", field: FieldDeny, r: rules(FieldDeny, "Write"),
			claude:   expect{effect: "--disallowedTools Write"},
			opencode: expect{effect: `{"permission":{"edit":"deny"}}`},
			codex:    expect{effect: "--sandbox read-only"}},
		{name: "deny Edit of a path", field: FieldDeny, r: rules(FieldDeny, "Edit(/src/**)"),
			claude:   expect{effect: "--disallowedTools Edit(/src/**)"},
			opencode: expect{effect: `{"permission":{"edit":{"src/*":"deny","box/tree/src/*":"deny"}}}`},
			codex:    expect{refused: "cannot limit edits to some paths"}},
		{name: "deny Read", field: FieldDeny, r: rules(FieldDeny, "Read"),
			claude:   expect{effect: "--disallowedTools Read"},
			opencode: expect{effect: `{"permission":{"read":"deny"}}`},
			codex:    expect{refused: "no read tool to deny"}},
		{name: "deny Read of a path in the working directory", field: FieldDeny, r: rules(FieldDeny, "Read(./.env)"),
			claude:   expect{effect: "--disallowedTools Read(./.env)"},
			opencode: expect{effect: `{"permission":{"read":{"sub/.env":"deny","box/tree/sub/.env":"deny"}}}`},
			codex:    expect{refused: "no read tool to deny"}},
		{name: "deny Read at any depth", field: FieldDeny, r: rules(FieldDeny, "Read(/**/secret.txt)"),
			claude:   expect{effect: "--disallowedTools Read(/**/secret.txt)"},
			opencode: expect{effect: `{"permission":{"read":{"secret.txt":"deny","*/secret.txt":"deny","box/tree/secret.txt":"deny","box/tree/*/secret.txt":"deny"}}}`},
			codex:    expect{refused: "no read tool to deny"}},
		{name: "deny Read outside the project", field: FieldDeny, r: rules(FieldDeny, "Read(~/.ssh/**)"),
			claude:   expect{effect: "--disallowedTools Read(~/.ssh/**)"},
			opencode: expect{refused: "outside it"},
			codex:    expect{refused: "no read tool to deny"}},
		{name: "deny Read with a one-segment wildcard", field: FieldDeny, r: rules(FieldDeny, "Read(*.env)"),
			claude:   expect{effect: "--disallowedTools Read(*.env)"},
			opencode: expect{refused: "only ** as a whole path segment"},
			codex:    expect{refused: "no read tool to deny"}},
		{name: "deny Glob, Grep and LS", field: FieldDeny, r: rules(FieldDeny, "Glob", "Grep", "LS"),
			claude:   expect{effect: "--disallowedTools Glob,Grep,LS"},
			opencode: expect{effect: `{"permission":{"glob":"deny","grep":"deny","list":"deny"}}`},
			codex:    expect{refused: "no read tool to deny"}},
		{name: "deny Bash", field: FieldDeny, r: rules(FieldDeny, "Bash"),
			claude:   expect{effect: "--disallowedTools Bash"},
			opencode: expect{effect: `{"permission":{"bash":"deny"}}`},
			codex:    expect{effect: "--disable shell_tool"}},
		{name: "deny a command prefix", field: FieldDeny, r: rules(FieldDeny, "Bash(git push:*)"),
			claude:   expect{effect: "--disallowedTools Bash(git push:*)"},
			opencode: expect{effect: `{"permission":{"bash":{"git push *":"deny"}}}`},
			codex:    expect{refused: "rules files"}},
		{name: "deny a command wildcard", field: FieldDeny, r: rules(FieldDeny, "Bash(npm run *)"),
			claude:   expect{effect: "--disallowedTools Bash(npm run *)"},
			opencode: expect{effect: `{"permission":{"bash":{"npm run *":"deny"}}}`},
			codex:    expect{refused: "rules files"}},
		{name: "deny a command with ?", field: FieldDeny, r: rules(FieldDeny, "Bash(rm ?)"),
			claude:   expect{effect: "--disallowedTools Bash(rm ?)"},
			opencode: expect{refused: "? in a command pattern"},
			codex:    expect{refused: "rules files"}},
		{name: "deny WebFetch", field: FieldDeny, r: rules(FieldDeny, "WebFetch"),
			claude:   expect{effect: "--disallowedTools WebFetch"},
			opencode: expect{effect: `{"permission":{"webfetch":"deny"}}`},
			codex:    expect{effect: `-c web_search="disabled"`}},
		{name: "deny WebFetch and WebSearch", field: FieldDeny, r: rules(FieldDeny, "WebFetch", "WebSearch"),
			claude:   expect{effect: "--disallowedTools WebFetch,WebSearch"},
			opencode: expect{effect: `{"permission":{"webfetch":"deny","websearch":"deny"}}`},
			codex:    expect{effect: `-c web_search="disabled"`}},
		{name: "deny a domain", field: FieldDeny, r: rules(FieldDeny, "WebFetch(domain:example.com)"),
			claude:   expect{effect: "--disallowedTools WebFetch(domain:example.com)"},
			opencode: expect{effect: `{"permission":{"webfetch":{"https://example.com":"deny","https://example.com/*":"deny","http://example.com":"deny","http://example.com/*":"deny"}}}`},
			codex:    expect{refused: "cannot be limited to some domains"}},
		{name: "deny a wildcard domain", field: FieldDeny, r: rules(FieldDeny, "WebFetch(domain:*.example.com)"),
			claude:   expect{effect: "--disallowedTools WebFetch(domain:*.example.com)"},
			opencode: expect{refused: "a host without wildcards"},
			codex:    expect{refused: "cannot be limited to some domains"}},
		{name: "deny Task", field: FieldDeny, r: rules(FieldDeny, "Task"),
			claude:   expect{effect: "--disallowedTools Task"},
			opencode: expect{effect: `{"permission":{"task":"deny"}}`},
			codex:    expect{refused: "no counterpart of Claude Code's Task tool"}},
		{name: "deny a subagent", field: FieldDeny, r: rules(FieldDeny, "Task(explore)"),
			claude:   expect{effect: "--disallowedTools Task(explore)"},
			opencode: expect{effect: `{"permission":{"task":{"explore":"deny"}}}`},
			codex:    expect{refused: "no counterpart of Claude Code's Task tool"}},
		{name: "deny TodoWrite and Skill", field: FieldDeny, r: rules(FieldDeny, "TodoWrite", "Skill"),
			claude:   expect{effect: "--disallowedTools TodoWrite,Skill"},
			opencode: expect{effect: `{"permission":{"todowrite":"deny","skill":"deny"}}`},
			codex:    expect{refused: "no counterpart"}},
		{name: "deny a tool opencode lacks", field: FieldDeny, r: rules(FieldDeny, "ScheduleWakeup"),
			claude:   expect{effect: "--disallowedTools ScheduleWakeup"},
			opencode: expect{refused: "no counterpart of Claude Code's ScheduleWakeup tool"},
			codex:    expect{refused: "no counterpart of Claude Code's ScheduleWakeup tool"}},
		{name: "deny an MCP server", field: FieldDeny, r: withMCP(rules(FieldDeny, "mcp__docs")),
			claude:   expect{effect: "--disallowedTools mcp__docs" + docsMCPClaude},
			opencode: expect{effect: `{"permission":{"docs_*":"deny"}}`},
			codex:    expect{effect: ""}},
		{name: "deny an MCP tool", field: FieldDeny, r: withMCP(rules(FieldDeny, "mcp__docs__search")),
			claude:   expect{effect: "--disallowedTools mcp__docs__search" + docsMCPClaude},
			opencode: expect{effect: `{"permission":{"docs_search":"deny"}}`},
			codex:    expect{effect: docsMCPArgs[1:] + ` -c mcp_servers.docs.disabled_tools=["search"]`}},
		{name: "an MCP rule with a dot", field: FieldDeny, r: rules(FieldDeny, "mcp__other.srv__search"),
			claude:   expect{refused: "MCP server and tool names"},
			opencode: expect{refused: "MCP server and tool names"},
			codex:    expect{refused: "MCP server and tool names"}},
		{name: "deny a tool of another MCP server", field: FieldDeny, r: rules(FieldDeny, "mcp__other__search"),
			claude:   expect{effect: "--disallowedTools mcp__other__search"},
			opencode: expect{effect: `{"permission":{"other_search":"deny"}}`},
			codex:    expect{refused: "other is not one of them"}},
		{name: "a rule that does not parse", field: FieldDeny, r: rules(FieldDeny, "Bash("),
			claude:   expect{refused: "not a Claude Code permission rule"},
			opencode: expect{refused: "not a Claude Code permission rule"},
			codex:    expect{refused: "not a Claude Code permission rule"}},

		// Allow rules.
		{name: "allow Edit and Write", field: FieldAllow, r: rules(FieldAllow, "Edit", "Write"),
			claude:   expect{effect: "--allowedTools Edit,Write"},
			opencode: expect{effect: `{"permission":{"edit":"allow"}}`},
			codex:    expect{effect: "--sandbox workspace-write"}},
		{name: "allow Edit alone", field: FieldAllow, r: rules(FieldAllow, "Edit"),
			claude:   expect{effect: "--allowedTools Edit"},
			opencode: expect{refused: "allow Edit and Write together"},
			codex:    expect{refused: "allow Edit and Write together"}},
		{name: "allow Read", field: FieldAllow, r: rules(FieldAllow, "Read", "Grep"),
			claude:   expect{effect: "--allowedTools Read,Grep"},
			opencode: expect{effect: `{"permission":{"read":"allow","grep":"allow"}}`},
			codex:    expect{effect: ""}},
		{name: "allow a command prefix", field: FieldAllow, r: rules(FieldAllow, "Bash(npm test:*)"),
			claude:   expect{effect: "--allowedTools Bash(npm test:*)"},
			opencode: expect{effect: `{"permission":{"bash":{"npm test *":"allow"}}}`},
			codex:    expect{refused: "rules files"}},
		{name: "allow Bash", field: FieldAllow, r: rules(FieldAllow, "Bash"),
			claude:   expect{effect: "--allowedTools Bash"},
			opencode: expect{effect: `{"permission":{"bash":"allow"}}`},
			codex:    expect{refused: "runs commands without asking only by its sandbox"}},
		{name: "allow WebFetch", field: FieldAllow, r: rules(FieldAllow, "WebFetch", "WebSearch"),
			claude:   expect{effect: "--allowedTools WebFetch,WebSearch"},
			opencode: expect{effect: `{"permission":{"webfetch":"allow","websearch":"allow"}}`},
			codex:    expect{effect: ""}},
		{name: "allow an MCP tool", field: FieldAllow, r: withMCP(rules(FieldAllow, "mcp__docs__search")),
			claude:   expect{effect: "--allowedTools mcp__docs__search"},
			opencode: expect{effect: `{"permission":{"docs_search":"allow"}}`},
			codex:    expect{refused: "no per-tool approval"}},

		// Modes.
		{name: "mode default", field: FieldMode, r: persona.Resolved{Permissions: persona.Permissions{Mode: "default"}},
			claude:   expect{effect: "--permission-mode default"},
			opencode: expect{effect: `{"permission":{"edit":"ask","bash":"ask","webfetch":"ask","websearch":"ask"}}`},
			codex:    expect{effect: "--sandbox read-only --ask-for-approval on-request"}},
		{name: "mode acceptEdits", field: FieldMode, r: persona.Resolved{Permissions: persona.Permissions{Mode: "acceptEdits"}},
			claude:   expect{effect: "--permission-mode acceptEdits"},
			opencode: expect{effect: `{"permission":{"edit":"allow","bash":"ask","webfetch":"ask","websearch":"ask"}}`},
			codex:    expect{effect: "--sandbox workspace-write --ask-for-approval on-request"}},
		{name: "mode plan", field: FieldMode, r: persona.Resolved{Permissions: persona.Permissions{Mode: "plan"}},
			claude:   expect{effect: "--permission-mode plan"},
			opencode: expect{effect: `{"permission":{"bash":"ask","webfetch":"ask","websearch":"ask","edit":"deny"}}`},
			codex:    expect{effect: "--sandbox read-only --ask-for-approval never"}},
		{name: "mode dontAsk", field: FieldMode, r: persona.Resolved{Permissions: persona.Permissions{Mode: "dontAsk"}},
			claude:   expect{effect: "--permission-mode dontAsk"},
			opencode: expect{effect: `{"permission":{"edit":"deny","bash":"deny","webfetch":"deny","websearch":"deny"}}`},
			codex:    expect{effect: "--sandbox read-only --ask-for-approval never"}},
		{name: "mode bypassPermissions", field: FieldMode, r: persona.Resolved{Permissions: persona.Permissions{Mode: "bypassPermissions"}},
			claude:   expect{effect: "--permission-mode bypassPermissions"},
			opencode: expect{effect: `{"permission":{"*":"allow"}}`},
			codex:    expect{effect: "--dangerously-bypass-approvals-and-sandbox"}},
		{name: "an unknown mode", field: FieldMode, r: persona.Resolved{Permissions: persona.Permissions{Mode: "auto"}},
			claude:   expect{refused: "no such permission mode"},
			opencode: expect{refused: "no counterpart of this permission mode"},
			codex:    expect{refused: "no counterpart of this permission mode"}},

		// How rules combine: opencode's last match wins, so denies come
		// after allows and plan's edit deny last; codex's sandbox is the
		// narrowest the rules ask for.
		{name: "plan with an allow of edits", field: FieldMode, r: persona.Resolved{Permissions: persona.Permissions{Mode: "plan", Allow: []string{"Edit", "Write"}}},
			claude:   expect{effect: "--permission-mode plan --allowedTools Edit,Write"},
			opencode: expect{effect: `{"permission":{"bash":"ask","webfetch":"ask","websearch":"ask","edit":"deny"}}`},
			codex:    expect{effect: "--sandbox read-only --ask-for-approval never"}},
		{name: "bypass with a deny", field: FieldMode, r: persona.Resolved{Permissions: persona.Permissions{Mode: "bypassPermissions", Deny: []string{"Edit", "Bash(git push:*)"}}},
			claude:   expect{refused: ""},
			opencode: expect{effect: `{"permission":{"*":"allow","edit":"deny","bash":{"git push *":"deny"}}}`},
			codex:    expect{effect: "--sandbox read-only --ask-for-approval never"}},
		{name: "allow a command and deny a narrower one", field: FieldAllow, r: persona.Resolved{Permissions: persona.Permissions{Allow: []string{"Bash(git:*)"}, Deny: []string{"Bash(git push:*)"}}},
			claude:   expect{effect: "--allowedTools Bash(git:*) --disallowedTools Bash(git push:*)"},
			opencode: expect{effect: `{"permission":{"bash":{"git *":"allow","git push *":"deny"}}}`},
			codex:    expect{refused: "rules files"}},
		{name: "deny Bash wins over an allowed command", field: FieldDeny, r: persona.Resolved{Permissions: persona.Permissions{Allow: []string{"Bash(ls:*)"}, Deny: []string{"Bash"}}},
			claude:   expect{effect: "--allowedTools Bash(ls:*) --disallowedTools Bash"},
			opencode: expect{effect: `{"permission":{"bash":{"ls *":"allow","*":"deny"}}}`},
			codex:    expect{effect: "--disable shell_tool"}},
		{name: "mode against codex's own sandbox", field: FieldMode, r: persona.Resolved{Permissions: persona.Permissions{Mode: "acceptEdits"}, HarnessSettings: persona.HarnessSettings{SandboxMode: "read-only"}},
			claude:   expect{effect: "--permission-mode acceptEdits"},
			opencode: expect{effect: `{"permission":{"edit":"allow","bash":"ask","webfetch":"ask","websearch":"ask"}}`},
			codex:    expect{refused: "harnessSettings.sandboxMode read-only contradicts it"}},
		{name: "a refused mode adds nothing", field: FieldMode, r: persona.Resolved{Permissions: persona.Permissions{Mode: "dontAsk"}, HarnessSettings: persona.HarnessSettings{ApprovalPolicy: "on-request"}},
			claude:   expect{effect: "--permission-mode dontAsk"},
			opencode: expect{effect: `{"permission":{"edit":"deny","bash":"deny","webfetch":"deny","websearch":"deny"}}`},
			codex:    expect{refused: "harnessSettings.approvalPolicy on-request contradicts it"}},
		{name: "deny of edits against codex's own sandbox", field: FieldDeny, r: persona.Resolved{Permissions: persona.Permissions{Deny: []string{"Edit", "Write"}}, HarnessSettings: persona.HarnessSettings{SandboxMode: "workspace-write"}},
			claude:   expect{effect: "--disallowedTools Edit,Write"},
			opencode: expect{effect: `{"permission":{"edit":"deny"}}`},
			codex:    expect{refused: "harnessSettings.sandboxMode workspace-write contradicts it"}},
		{name: "deny of web access against codex's own web search", field: FieldDeny, r: persona.Resolved{Permissions: persona.Permissions{Deny: []string{"WebSearch"}}, HarnessSettings: persona.HarnessSettings{WebSearch: ptr(true)}},
			claude:   expect{effect: "--disallowedTools WebSearch"},
			opencode: expect{effect: `{"permission":{"websearch":"deny"}}`},
			codex:    expect{refused: "harnessSettings.webSearch true contradicts it"}},

		// Reasoning.
		{name: "reasoning", field: FieldReasoning, r: persona.Resolved{HarnessSettings: persona.HarnessSettings{Reasoning: "high"}},
			claude:   expect{effect: "--effort high"},
			opencode: expect{effect: `{"reasoningEffort":"high"}`},
			codex:    expect{effect: `-c model_reasoning_effort="high"`}},
		{name: "reasoning claude lacks", field: FieldReasoning, r: persona.Resolved{HarnessSettings: persona.HarnessSettings{Reasoning: "minimal"}},
			claude:   expect{refused: "--effort takes"},
			opencode: expect{effect: `{"reasoningEffort":"minimal"}`},
			codex:    expect{effect: `-c model_reasoning_effort="minimal"`}},

		// MCP servers.
		{name: "a stdio MCP server", field: FieldMCP, r: withMCP(persona.Resolved{}),
			claude:   expect{effect: docsMCPClaude[1:]},
			opencode: expect{effect: `{}`},
			codex:    expect{effect: docsMCPArgs[1:]}},
		{name: "an SSE MCP server", field: FieldMCP, r: persona.Resolved{MCPServers: map[string]persona.MCPServer{"docs": {Type: "sse", URL: "https://x/sse"}}},
			claude:   expect{effect: `"type":"sse"`},
			opencode: expect{effect: `{}`},
			codex:    expect{refused: "not SSE"}},

		// Codex's own settings: refused elsewhere, never dropped.
		{name: "approval on-failure", field: FieldApprovalPolicy, r: persona.Resolved{HarnessSettings: persona.HarnessSettings{ApprovalPolicy: "on-failure"}},
			claude: expect{refused: "codex's approval setting; claude has no"}, opencode: expect{refused: "codex's approval setting; opencode has no"},
			codex: expect{effect: `-c approval_policy="on-failure"`}},
		{name: "approval untrusted", field: FieldApprovalPolicy, r: persona.Resolved{HarnessSettings: persona.HarnessSettings{ApprovalPolicy: "untrusted"}},
			claude: expect{refused: "codex's approval setting"}, opencode: expect{refused: "codex's approval setting"},
			codex: expect{refused: "no longer supports"}},
		{name: "web search off", field: FieldWebSearch, r: persona.Resolved{HarnessSettings: persona.HarnessSettings{WebSearch: ptr(false)}},
			claude: expect{refused: "permissions.deny of WebSearch"}, opencode: expect{refused: "permissions.deny of WebSearch"},
			codex: expect{effect: `-c web_search="disabled"`}},
		{name: "sandbox read-only", field: FieldSandboxMode, r: persona.Resolved{HarnessSettings: persona.HarnessSettings{SandboxMode: "read-only"}},
			claude: expect{refused: "codex's sandbox setting; claude has no such sandbox"}, opencode: expect{refused: "codex's sandbox setting; opencode has no such sandbox"},
			codex: expect{effect: "--sandbox read-only"}},
		{name: "network access", field: FieldNetworkAccess, r: persona.Resolved{HarnessSettings: persona.HarnessSettings{SandboxMode: "workspace-write", WorkspaceWriteNetworkAccess: ptr(true)}},
			claude: expect{refused: "codex's sandbox setting"}, opencode: expect{refused: "codex's sandbox setting"},
			codex: expect{effect: "--sandbox workspace-write -c sandbox_workspace_write.network_access=true"}},
		{name: "bypass", field: FieldBypass, r: persona.Resolved{HarnessSettings: persona.HarnessSettings{DangerouslyBypassApprovalsAndSandbox: ptr(true)}},
			claude: expect{refused: "bypassPermissions says it"}, opencode: expect{refused: "bypassPermissions says it"},
			codex: expect{effect: "--dangerously-bypass-approvals-and-sandbox"}},
	}
	for _, tt := range tests {
		for _, h := range []string{persona.HarnessClaude, persona.HarnessOpencode, persona.HarnessCodex} {
			want := map[string]expect{"claude": tt.claude, "opencode": tt.opencode, "codex": tt.codex}[h]
			t.Run(tt.name+"/"+h, func(t *testing.T) {
				r := tt.r
				r.ID, r.Harness, r.Model = "rev", h, "m"
				inv, err := Plan(&r, Options{ConfigDir: "/cfg", AllowUnmapped: true, Root: "/box/tree", Subdir: "sub"})
				if err != nil {
					t.Fatal(err)
				}
				var values []FieldMapping
				for _, f := range inv.Mapping.Fields {
					if f.Field == tt.field {
						values = append(values, f)
					}
				}
				if len(values) == 0 {
					t.Fatalf("no %s in the mapping: %v", tt.field, inv.Mapping.Fields)
				}
				for _, f := range values {
					switch {
					case want.refused == "" && f.Refused != "":
						t.Errorf("%s refused, want applied", f)
					case want.refused != "" && !strings.Contains(f.Refused, want.refused):
						t.Errorf("%s, want refused for %q", f, want.refused)
					}
				}
				if want.refused != "" {
					if inv.Mapping.Err() == nil {
						t.Errorf("Mapping.Err() = nil with %v refused", values)
					}
					return
				}
				got := effect(t, h, inv)
				if h == persona.HarnessClaude && tt.name != "bypass with a deny" && !strings.Contains(got, want.effect) ||
					h != persona.HarnessClaude && got != want.effect {
					t.Errorf("effect:\n got %s\nwant %s", got, want.effect)
				}
			})
		}
	}
}

// effect is what a test of TestMapping compares: claude's and codex's
// arguments after the model; opencode's agent without its mode and model.
func effect(t *testing.T, h string, inv *Invocation) string {
	t.Helper()
	if h != persona.HarnessOpencode {
		return strings.Join(inv.Args[2:], " ")
	}
	var cfg struct {
		Agent map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal([]byte(inv.Files["/cfg/opencode.json"]), &cfg); err != nil {
		t.Fatal(err)
	}
	agent := cfg.Agent["rev"]
	delete(agent, "mode")
	delete(agent, "model")
	// Compact, keeping the order opencode reads.
	var b strings.Builder
	b.WriteString("{")
	first := true
	for _, k := range []string{"permission", "reasoningEffort"} {
		if v, ok := agent[k]; ok {
			if !first {
				b.WriteString(",")
			}
			first = false
			var c bytes.Buffer
			if err := json.Compact(&c, v); err != nil {
				t.Fatal(err)
			}
			b.WriteString(`"` + k + `":` + c.String())
		}
	}
	b.WriteString("}")
	return b.String()
}

func TestMappingModels(t *testing.T) {
	tests := []struct {
		harness, model, wantArgs, wantAgentModel string
	}{
		{"claude", "claude-opus-4-1", "--model claude-opus-4-1", ""},
		{"claude", "anthropic/claude-opus-4-1", "--model claude-opus-4-1", ""},
		{"codex", "openai/gpt-5-mini", "-m gpt-5-mini", ""},
		{"codex", "gpt-5.5", "-m gpt-5.5", ""},
		{"opencode", "openai/gpt-5-mini", "--agent rev", `"openai/gpt-5-mini"`},
		{"opencode", "claude-opus-4-1", "--agent rev", `"anthropic/claude-opus-4-1"`},
		{"opencode", "gpt-5-mini", "--agent rev", `"openai/gpt-5-mini"`},
		{"opencode", "m", "--agent rev", `"m"`},
	}
	for _, tt := range tests {
		r := persona.Resolved{ID: "rev", Harness: tt.harness, Model: tt.model}
		inv, err := Plan(&r, Options{ConfigDir: "/cfg"})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(inv.Args, " "); got != tt.wantArgs {
			t.Errorf("%s %s: args %q, want %q", tt.harness, tt.model, got, tt.wantArgs)
		}
		if tt.wantAgentModel != "" && !strings.Contains(inv.Files["/cfg/opencode.json"], `"model": `+tt.wantAgentModel) {
			t.Errorf("%s %s: config %s, want model %s", tt.harness, tt.model, inv.Files["/cfg/opencode.json"], tt.wantAgentModel)
		}
		if f := inv.Mapping.Fields[0]; f.Field != FieldModel || f.Value != tt.model || f.Refused != "" {
			t.Errorf("%s %s: first mapping %v, want the model applied", tt.harness, tt.model, f)
		}
		if tt.harness == "claude" && !contains(inv.SetEnv, claudeNoRemap) {
			t.Errorf("claude %s: env %v lacks %s", tt.model, inv.SetEnv, claudeNoRemap)
		}
	}
}

// TestClaudeReasoning checks that reasoning reaches claude as an effort,
// or as a thinking budget for the models that take no effort.
func TestClaudeReasoning(t *testing.T) {
	tests := []struct {
		model, reasoning string
		env              map[string]string
		wantArgs         string
		wantEnv          string
		refused          string
	}{
		{model: "claude-opus-4-5", reasoning: "low", wantArgs: "--model claude-opus-4-5 --effort low"},
		{model: "claude-sonnet-4-6", reasoning: "high", wantArgs: "--model claude-sonnet-4-6 --effort high"},
		{model: "claude-opus-4-1", reasoning: "high", wantArgs: "--model claude-opus-4-1", wantEnv: "MAX_THINKING_TOKENS=31999"},
		{model: "anthropic/claude-sonnet-4-5", reasoning: "medium", wantArgs: "--model claude-sonnet-4-5", wantEnv: "MAX_THINKING_TOKENS=10000"},
		{model: "claude-haiku-4-5-20251001", reasoning: "low", wantArgs: "--model claude-haiku-4-5-20251001", wantEnv: "MAX_THINKING_TOKENS=4000"},
		{model: "claude-sonnet-4-5", reasoning: "low", env: map[string]string{"MAX_THINKING_TOKENS": "1"}, wantArgs: "--model claude-sonnet-4-5", refused: "env sets MAX_THINKING_TOKENS"},
	}
	for _, tt := range tests {
		r := persona.Resolved{ID: "rev", Harness: "claude", Model: tt.model, Env: tt.env, HarnessSettings: persona.HarnessSettings{Reasoning: tt.reasoning}}
		inv, err := Plan(&r, Options{AllowUnmapped: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(inv.Args, " "); got != tt.wantArgs {
			t.Errorf("%s %s: args %q, want %q", tt.model, tt.reasoning, got, tt.wantArgs)
		}
		if tt.wantEnv != "" && !contains(inv.SetEnv, tt.wantEnv) {
			t.Errorf("%s %s: env %q lacks %s", tt.model, tt.reasoning, inv.SetEnv, tt.wantEnv)
		}
		if tt.wantEnv == "" && strings.Contains(strings.Join(inv.SetEnv, " "), "MAX_THINKING_TOKENS=") != (tt.env != nil) {
			t.Errorf("%s %s: env %q", tt.model, tt.reasoning, inv.SetEnv)
		}
		if err := inv.Mapping.Err(); (err != nil) != (tt.refused != "") || err != nil && !strings.Contains(err.Error(), tt.refused) {
			t.Errorf("%s %s: refusal %v, want %q", tt.model, tt.reasoning, err, tt.refused)
		}
	}
}

// TestUnmapped checks that Plan refuses a persona value the harness cannot
// express, naming the field, the value and the harness, and plans it
// without that value when allowed.
func TestUnmapped(t *testing.T) {
	r := persona.Resolved{ID: "rev", Harness: "codex", Model: "gpt-5", Permissions: persona.Permissions{Deny: []string{"Bash(git push:*)", "WebFetch"}}}
	inv, err := Plan(&r, Options{})
	var ue *UnmappedError
	if !errors.As(err, &ue) || ue.Harness != "codex" || len(ue.Refused) != 1 {
		t.Fatalf("Plan() error = %v, want an UnmappedError for codex", err)
	}
	const want = `codex cannot apply permissions.deny "Bash(git push:*)": codex takes command rules only from rules files in its home or in a trusted project, which workforce does not write`
	if err.Error() != want {
		t.Errorf("Error() =\n%s\nwant\n%s", err, want)
	}
	if inv == nil || !contains(inv.Args, `web_search="disabled"`) {
		t.Errorf("the refused invocation still shows what is applied: %v", inv)
	}
	if inv, err = Plan(&r, Options{AllowUnmapped: true}); err != nil || inv.Mapping.Err() == nil {
		t.Fatalf("Plan(AllowUnmapped) = %v; want the invocation, with the refusal in its mapping", err)
	}
	w := inv.Mapping.Warnings()
	if len(w) != 1 || !strings.Contains(w[0], `codex does not apply permissions.deny "Bash(git push:*)"`) {
		t.Errorf("Warnings() = %q", w)
	}
	r.Permissions.Deny = append(r.Permissions.Deny, "Read")
	_, err = Plan(&r, Options{})
	if err == nil || !strings.HasPrefix(err.Error(), `codex cannot apply 2 persona values: permissions.deny "Bash(git push:*)": `) ||
		!strings.Contains(err.Error(), `; permissions.deny "Read": codex reads files through its shell`) {
		t.Errorf("two refusals: %v", err)
	}
}

// TestCodexBudget checks that codex's instruction budget holds the whole
// materialized AGENTS.md.
func TestCodexBudget(t *testing.T) {
	r := persona.Resolved{ID: "rev", Harness: "codex", Model: "gpt-5", SystemPrompt: "go"}
	for _, tt := range []struct {
		bytes int
		want  string
	}{
		{0, "-m gpt-5 go"},
		{codexDocBudget, "-m gpt-5 go"},
		{codexDocBudget + 1, "-m gpt-5 -c project_doc_max_bytes=32769 go"},
		{100000, "-m gpt-5 -c project_doc_max_bytes=100000 go"},
	} {
		inv, err := Plan(&r, Options{InstructionBytes: tt.bytes})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(inv.Args, " "); got != tt.want {
			t.Errorf("InstructionBytes %d: args %q, want %q", tt.bytes, got, tt.want)
		}
	}
}

// TestOpencodePermissionOrder checks that the agent's permission keeps
// the order opencode evaluates in, and the user's own configuration
// keeps its order too.
func TestOpencodePermissionOrder(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "mine.json")
	mine := `{"permission": {"bash": {"*": "ask", "git status": "allow"}, "edit": "allow"}, "agent": {"mine": {"permission": {"webfetch": {"z*": "deny", "a*": "allow"}}}}}`
	if err := os.WriteFile(user, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	r := persona.Resolved{ID: "rev", Harness: "opencode", Model: "m",
		Permissions: persona.Permissions{Mode: "plan", Allow: []string{"mcp__docs__read", "Bash(git:*)"}, Deny: []string{"mcp__docs", "Bash(git push:*)"}}}
	inv, err := Plan(&r, Options{ConfigDir: dir, Env: []string{"OPENCODE_CONFIG=" + user}})
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(inv.Files[filepath.Join(dir, "opencode.json")])); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"permission":{"bash":{"*":"ask","git status":"allow"},"edit":"allow"}`,
		`"mine":{"permission":{"webfetch":{"z*":"deny","a*":"allow"}}}`,
		`"permission":{"bash":{"*":"ask","git *":"allow","git push *":"deny"},"webfetch":"ask","websearch":"ask","docs_read":"allow","docs_*":"deny","edit":"deny"}`,
	} {
		if !strings.Contains(compact.String(), want) {
			t.Errorf("session config lacks %s:\n%s", want, compact.String())
		}
	}
}

func TestOcPermissionReplaces(t *testing.T) {
	p := ocPermission{{"edit", "*", "ask"}, {"bash", "*", "ask"}, {"edit", "*", "deny"}, {"bash", "ls *", "allow"}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	// The later edit rule replaces the earlier one, at its own place: after
	// bash's first rule.
	if want := `{"bash":{"*":"ask","ls *":"allow"},"edit":"deny"}`; string(b) != want {
		t.Errorf("Marshal = %s, want %s", b, want)
	}
}

// TestMappingDoc fails when docs/harnesses.md is not the table the code
// maps (go generate ./harness writes it).
func TestMappingDoc(t *testing.T) {
	got, err := os.ReadFile(filepath.Join("..", "docs", "harnesses.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := MappingDoc(); string(got) != want {
		t.Errorf("docs/harnesses.md is stale: run go generate ./harness")
	}
}

// TestCodexRefusedModeAddsNothing checks that a mode codex refuses, run
// anyway, leaves its sandbox and approval policy out.
func TestCodexRefusedModeAddsNothing(t *testing.T) {
	r := persona.Resolved{ID: "rev", Harness: "codex", Model: "m", Permissions: persona.Permissions{Mode: "dontAsk"},
		HarnessSettings: persona.HarnessSettings{ApprovalPolicy: "on-request"}}
	inv, err := Plan(&r, Options{AllowUnmapped: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(inv.Args, " "), "-m m --ask-for-approval on-request"; got != want {
		t.Errorf("args %q, want %q", got, want)
	}
}

// TestMappingConfined checks what each harness gets inside workforce's
// write sandbox (Options.Confined): its own sandbox off, the persona's
// read-only sandbox kept as a read-only tree, codex's daemon off in
// interactive runs, and each choice recorded under FieldWriteSandbox.
func TestMappingConfined(t *testing.T) {
	mode := func(m string) persona.Resolved { return persona.Resolved{Permissions: persona.Permissions{Mode: m}} }
	settings := func(hs persona.HarnessSettings) persona.Resolved { return persona.Resolved{HarnessSettings: hs} }
	tests := []struct {
		name      string
		harness   string
		r         persona.Resolved
		oneShot   bool
		args      string // the arguments after the model (interactive) or the head (one-shot)
		readOnly  bool
		refused   string
		sandboxed string // what FieldWriteSandbox says
	}{
		{name: "codex without a mode", harness: "codex", args: "--sandbox danger-full-access -c features.plugins=false -c analytics.enabled=false --no-daemon", sandboxed: "codex's own sandbox off"},
		{name: "codex default", harness: "codex", r: mode("default"), args: "--sandbox danger-full-access --ask-for-approval on-request -c features.plugins=false -c analytics.enabled=false --no-daemon", readOnly: true, sandboxed: "nothing of the tree"},
		{name: "codex acceptEdits", harness: "codex", r: mode("acceptEdits"), args: "--sandbox danger-full-access --ask-for-approval on-request -c features.plugins=false -c analytics.enabled=false --no-daemon", sandboxed: "the tree and the session's tmp"},
		{name: "codex plan", harness: "codex", r: mode("plan"), args: "--sandbox danger-full-access --ask-for-approval never -c features.plugins=false -c analytics.enabled=false --no-daemon", readOnly: true},
		{name: "codex bypassPermissions", harness: "codex", r: mode("bypassPermissions"), args: "--dangerously-bypass-approvals-and-sandbox -c features.plugins=false -c analytics.enabled=false --no-daemon"},
		{name: "codex sandboxMode read-only", harness: "codex", r: settings(persona.HarnessSettings{SandboxMode: "read-only"}), args: "--sandbox danger-full-access -c features.plugins=false -c analytics.enabled=false --no-daemon", readOnly: true},
		{name: "codex sandboxMode workspace-write", harness: "codex", r: settings(persona.HarnessSettings{SandboxMode: "workspace-write"}), args: "--sandbox danger-full-access -c features.plugins=false -c analytics.enabled=false --no-daemon"},
		{name: "codex deny of edits", harness: "codex", r: rules(FieldDeny, "Edit", "Write"), args: "--sandbox danger-full-access -c features.plugins=false -c analytics.enabled=false --no-daemon", readOnly: true},
		{name: "codex allow of edits", harness: "codex", r: rules(FieldAllow, "Edit", "Write"), args: "--sandbox danger-full-access -c features.plugins=false -c analytics.enabled=false --no-daemon"},
		{name: "codex network false is mode none", harness: "codex", r: settings(persona.HarnessSettings{SandboxMode: "workspace-write", WorkspaceWriteNetworkAccess: ptrTo(false)}),
			args: "--sandbox danger-full-access -c features.plugins=false -c analytics.enabled=false --no-daemon"},
		{name: "codex network true passes nothing", harness: "codex", r: settings(persona.HarnessSettings{SandboxMode: "workspace-write", WorkspaceWriteNetworkAccess: ptrTo(true)}),
			args: "--sandbox danger-full-access -c features.plugins=false -c analytics.enabled=false --no-daemon"},
		{name: "codex exec has no -c features.plugins=false -c analytics.enabled=false --no-daemon", harness: "codex", r: mode("default"), oneShot: true, readOnly: true,
			args: `exec --json --skip-git-repo-check --sandbox danger-full-access -c features.plugins=false -c analytics.enabled=false -c approval_policy="never" task`, sandboxed: "codex's own sandbox off"},
		{name: "claude", harness: "claude", r: mode("acceptEdits"), args: `--permission-mode acceptEdits --settings {"sandbox":{"enabled":false}}`, sandboxed: "claude's own sandbox (bubblewrap) cannot start"},
		{name: "claude one-shot", harness: "claude", oneShot: true, args: `-p task --output-format stream-json --verbose --settings {"sandbox":{"enabled":false}}`},
		{name: "opencode", harness: "opencode", args: "--agent reviewer", sandboxed: "opencode has no sandbox of its own"},
		{name: "opencode network false is mode none", harness: "opencode", r: settings(persona.HarnessSettings{WorkspaceWriteNetworkAccess: ptrTo(false)}), args: "--agent reviewer"},
		{name: "claude network true passes nothing", harness: "claude", r: settings(persona.HarnessSettings{WorkspaceWriteNetworkAccess: ptrTo(true)}), args: `--settings {"sandbox":{"enabled":false}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			r.ID, r.Harness, r.Model = "reviewer", tc.harness, persona.ModelInherit
			o := Options{Confined: true, ConfigDir: t.TempDir(), AllowUnmapped: true,
				Env: []string{"SSH_AUTH_SOCK=/run/user/1/ssh", "KEEP=1", "DOCKER_HOST=unix:///run/docker.sock"}}
			var inv *Invocation
			var err error
			if tc.oneShot {
				inv, err = PlanOneShot(&r, o, OneShot{Task: "task"})
			} else {
				inv, err = Plan(&r, o)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(inv.Args, " "); got != tc.args {
				t.Errorf("args %q, want %q", got, tc.args)
			}
			if inv.TreeReadOnly != tc.readOnly {
				t.Errorf("TreeReadOnly = %v, want %v", inv.TreeReadOnly, tc.readOnly)
			}
			refused := ""
			for _, f := range inv.Mapping.Refused() {
				refused += f.Refused
			}
			if tc.refused == "" && refused != "" || !strings.Contains(refused, tc.refused) {
				t.Errorf("refused %q, want %q", refused, tc.refused)
			}
			var sandboxed []string
			for _, f := range inv.Mapping.Fields {
				if f.Field == FieldWriteSandbox {
					sandboxed = append(sandboxed, f.Applied)
				}
			}
			if len(sandboxed) != 1 || !strings.Contains(sandboxed[0], tc.sandboxed) {
				t.Errorf("the mapping's %s entries: %q, want one saying %q", FieldWriteSandbox, sandboxed, tc.sandboxed)
			}
			// The switches that stop traffic besides the model's, the
			// sockets of the user's agents left out, and
			// workspaceWriteNetworkAccess applied, never refused.
			env := strings.Join(inv.Env(), " ")
			switch tc.harness {
			case "claude":
				if !slices.Contains(inv.SetEnv, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1") {
					t.Errorf("confined claude's env %q, want CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", inv.SetEnv)
				}
			case "opencode":
				if !slices.Contains(inv.SetEnv, "OPENCODE_DISABLE_MODELS_FETCH=1") {
					t.Errorf("confined opencode's env %q, want OPENCODE_DISABLE_MODELS_FETCH=1", inv.SetEnv)
				}
			}
			if strings.Contains(env, "SSH_AUTH_SOCK") || strings.Contains(env, "DOCKER_HOST") || !strings.Contains(env, "KEEP=1") {
				t.Errorf("confined env %q: want SSH_AUTH_SOCK and DOCKER_HOST out, KEEP in", env)
			}
			if !slices.Equal(inv.DroppedEnv, []string{"SSH_AUTH_SOCK", "DOCKER_HOST"}) {
				t.Errorf("DroppedEnv = %q", inv.DroppedEnv)
			}
			if v := r.HarnessSettings.WorkspaceWriteNetworkAccess; v != nil {
				want := networkAsPolicy
				if !*v {
					want = networkNone
				}
				var got []string
				for _, f := range inv.Mapping.Fields {
					if f.Field == FieldNetworkAccess {
						got = append(got, f.Applied)
					}
				}
				if !slices.Equal(got, []string{want}) {
					t.Errorf("confined %s = %q, want %q", FieldNetworkAccess, got, want)
				}
			}
			// Unconfined, nothing of it.
			o.Confined = false
			if tc.oneShot {
				inv, err = PlanOneShot(&r, o, OneShot{Task: "task"})
			} else {
				inv, err = Plan(&r, o)
			}
			if err != nil {
				t.Fatal(err)
			}
			args := strings.Join(inv.Args, " ")
			if env := strings.Join(inv.Env(), " "); !strings.Contains(env, "SSH_AUTH_SOCK") || strings.Contains(env, "DISABLE_") {
				t.Errorf("unconfined env %q: want the user's SSH_AUTH_SOCK and no switch", env)
			}
			for _, a := range []string{"danger-full-access", "--no-daemon", "--settings", "features.plugins"} {
				if strings.Contains(args, a) && !strings.Contains(tc.args, "--dangerously-bypass") {
					t.Errorf("unconfined args %q hold %s", args, a)
				}
			}
			if inv.TreeReadOnly {
				t.Errorf("unconfined, TreeReadOnly is set")
			}
			for _, f := range inv.Mapping.Fields {
				if f.Field == FieldWriteSandbox {
					t.Errorf("unconfined, the mapping says %v", f)
				}
			}
		})
	}
}
