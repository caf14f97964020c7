package harness

import (
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/persona"
)

func TestParseRule(t *testing.T) {
	tests := []struct {
		in         string
		tool, spec string
		wantErr    string
	}{
		{in: "Edit", tool: "Edit"},
		{in: "Write", tool: "Write"},
		{in: "  WebFetch ", tool: "WebFetch"},
		{in: "WebSearch", tool: "WebSearch"},
		{in: "Bash(git push:*)", tool: "Bash", spec: "git push:*"},
		{in: "Bash(npm run *)", tool: "Bash", spec: "npm run *"},
		{in: "Bash(echo (hi))", tool: "Bash", spec: "echo (hi)"},
		{in: "Read(./.env)", tool: "Read", spec: "./.env"},
		{in: "Read(~/.ssh/**)", tool: "Read", spec: "~/.ssh/**"},
		{in: "Edit(//etc/hosts)", tool: "Edit", spec: "//etc/hosts"},
		{in: "WebFetch(domain:example.com)", tool: "WebFetch", spec: "domain:example.com"},
		{in: "mcp__github", tool: "mcp__github"},
		{in: "mcp__github__create_issue", tool: "mcp__github__create_issue"},
		{in: "mcp__github__*", tool: "mcp__github__*"},
		{in: "mcp__my-server__get-x", tool: "mcp__my-server__get-x"},
		{in: "", wantErr: "empty rule"},
		{in: "   ", wantErr: "empty rule"},
		{in: "Bash(", wantErr: "does not close"},
		{in: "Bash(git", wantErr: "does not close"},
		{in: "Bash)", wantErr: "does not open"},
		{in: "Bash()", wantErr: "empty specifier"},
		{in: "Bash( )", wantErr: "empty specifier"},
		{in: "Bash (ls)", wantErr: "not a tool name"},
		{in: "(ls)", wantErr: "not a tool name"},
		{in: "9Tool", wantErr: "not a tool name"},
		{in: "Web Fetch", wantErr: "not a tool name"},
		{in: "Bash(ls\n)", wantErr: "control character"},
		{in: "mcp__", wantErr: "want mcp__SERVER"},
		{in: "mcp____tool", wantErr: "want mcp__SERVER"},
		{in: "mcp__github__", wantErr: "want mcp__SERVER"},
		{in: "mcp__github(x)", wantErr: "takes no specifier"},
		{in: "mcp__git hub", wantErr: "letters, digits"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := ParseRule(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseRule(%q) = %+v, %v; want an error containing %q", tt.in, r, err, tt.wantErr)
				}
				return
			}
			if err != nil || r.Tool != tt.tool || r.Specifier != tt.spec {
				t.Fatalf("ParseRule(%q) = %+v, %v; want tool %q, specifier %q", tt.in, r, err, tt.tool, tt.spec)
			}
			if got := r.String(); got != strings.TrimSpace(tt.in) {
				t.Errorf("String() = %q, want %q", got, strings.TrimSpace(tt.in))
			}
		})
	}
}

func TestRuleMCP(t *testing.T) {
	tests := []struct {
		in, server, tool string
		ok               bool
	}{
		{"mcp__github", "github", "", true},
		{"mcp__github__create_issue", "github", "create_issue", true},
		{"mcp__github__*", "github", "*", true},
		{"mcp__a__b__c", "a", "b__c", true},
		{"Edit", "", "", false},
	}
	for _, tt := range tests {
		r, err := ParseRule(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		server, tool, ok := r.MCP()
		if server != tt.server || tool != tt.tool || ok != tt.ok {
			t.Errorf("ParseRule(%q).MCP() = %q, %q, %v; want %q, %q, %v", tt.in, server, tool, ok, tt.server, tt.tool, tt.ok)
		}
	}
}

// FuzzParseRule checks that a rule that parses prints as a rule that parses
// to itself, and that an MCP rule's parts are names.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"Edit", "Write", "Bash(git push:*)", "WebFetch", "WebSearch", "Read(./.env)",
		"mcp__server__tool", "mcp__s", "mcp__s__*", "WebFetch(domain:example.com)", "Bash(", "Bash()", " Edit ", "a(b)c)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			return
		}
		out := r.String()
		if out != strings.TrimSpace(out) || out == "" {
			t.Fatalf("ParseRule(%q).String() = %q: not trimmed or empty", s, out)
		}
		back, err := ParseRule(out)
		if err != nil || back != r {
			t.Fatalf("ParseRule(%q) = %+v, its String %q parses to %+v, %v", s, r, out, back, err)
		}
		if server, tool, ok := r.MCP(); ok {
			if !isName(server, false) || (tool != "" && tool != "*" && !isName(tool, false)) || r.Specifier != "" {
				t.Fatalf("ParseRule(%q) = %+v: MCP server %q, tool %q", s, r, server, tool)
			}
		} else if !isName(r.Tool, true) {
			t.Fatalf("ParseRule(%q) = %+v: tool %q is not a name", s, r, r.Tool)
		}
	})
}

// FuzzMapping checks that no rule is dropped silently: on every harness,
// each allow and deny rule, whatever it is, is in the mapping exactly
// once, applied or refused.
func FuzzMapping(f *testing.F) {
	for _, s := range []string{"Edit", "Write", "Bash(git push:*)", "WebFetch(domain:example.com)", "Read(/**/x)",
		"Read(~/.ssh/**)", "mcp__docs__search", "mcp__other", "Task(explore)", "Bash(", "Unknown"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, allow, deny string) {
		for _, h := range []string{"claude", "opencode", "codex"} {
			r := persona.Resolved{ID: "p", Harness: h, Model: "m", Permissions: persona.Permissions{Allow: []string{allow}, Deny: []string{deny}},
				MCPServers: map[string]persona.MCPServer{"docs": {Type: "stdio", Command: "docs-mcp"}}}
			inv, err := Plan(&r, Options{ConfigDir: "/cfg", AllowUnmapped: true, Root: "/box", Subdir: "sub"})
			if err != nil {
				t.Fatalf("%s: Plan(allow %q, deny %q) = %v", h, allow, deny, err)
			}
			for field, value := range map[string]string{FieldAllow: allow, FieldDeny: deny} {
				n := 0
				for _, m := range inv.Mapping.Fields {
					if m.Field == field && m.Value == value {
						n++
						if (m.Applied == "") == (m.Refused == "") {
							t.Errorf("%s: %s %q is %+v: want applied or refused", h, field, value, m)
						}
					}
				}
				if n != 1 {
					t.Errorf("%s: %s %q is in the mapping %d times, want once: %v", h, field, value, n, inv.Mapping.Fields)
				}
			}
		}
	})
}
