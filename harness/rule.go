package harness

import (
	"fmt"
	"strings"
	"unicode"
)

// Rule is one permission rule of a persona, in Claude Code's syntax: a tool
// name alone (Edit, WebFetch, mcp__github__create_issue) or a tool name
// with a specifier in parentheses (Bash(git push:*), Read(./.env),
// WebFetch(domain:example.com)).
type Rule struct {
	// Tool is the tool name: a built-in tool (Bash, Edit, Write, Read,
	// WebFetch, ...) or an MCP tool, mcp__SERVER or mcp__SERVER__TOOL
	// (TOOL may be *).
	Tool string
	// Specifier is the text between the parentheses; empty when the rule
	// names the whole tool.
	Specifier string
}

// ParseRule parses a permission rule in Claude Code's syntax. Surrounding
// white space is ignored. A specifier must not be empty, and an MCP rule
// takes none.
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Rule{}, fmt.Errorf("empty rule; want a tool name such as Edit or Bash(git push:*)")
	}
	for _, c := range s {
		if unicode.IsControl(c) {
			return Rule{}, fmt.Errorf("rule %q has a control character", s)
		}
	}
	name, spec := s, ""
	if i := strings.IndexByte(s, '('); i >= 0 {
		if !strings.HasSuffix(s, ")") {
			return Rule{}, fmt.Errorf("rule %q opens a specifier it does not close; want Tool(specifier)", s)
		}
		name, spec = s[:i], s[i+1:len(s)-1]
		if strings.TrimSpace(spec) == "" {
			return Rule{}, fmt.Errorf("rule %q has an empty specifier; write %s alone for the whole tool", s, name)
		}
	} else if strings.ContainsRune(s, ')') {
		return Rule{}, fmt.Errorf("rule %q closes a specifier it does not open", s)
	}
	r := Rule{Tool: name, Specifier: spec}
	if server, tool, ok := r.MCP(); ok {
		if server == "" || strings.HasSuffix(name, "__") {
			return Rule{}, fmt.Errorf("rule %q: want mcp__SERVER or mcp__SERVER__TOOL", s)
		}
		if spec != "" {
			return Rule{}, fmt.Errorf("rule %q: an MCP rule takes no specifier", s)
		}
		if !isName(server, false) || tool != "*" && tool != "" && !isName(tool, false) {
			return Rule{}, fmt.Errorf("rule %q: MCP server and tool names are letters, digits, _ and -", s)
		}
		return r, nil
	}
	if !isName(name, true) {
		return Rule{}, fmt.Errorf("rule %q: %q is not a tool name; want letters and digits, such as Edit or WebFetch", s, name)
	}
	return r, nil
}

// isName reports whether s is a tool name: a letter first when tool is
// set, then letters, digits, _ and -.
func isName(s string, tool bool) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c < 0x80 && (unicode.IsLetter(c) || c == '_'):
		case c < 0x80 && (unicode.IsDigit(c) || c == '-'):
			if tool && i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// String returns the rule in Claude Code's syntax.
func (r Rule) String() string {
	if r.Specifier == "" {
		return r.Tool
	}
	return r.Tool + "(" + r.Specifier + ")"
}

// MCP returns the server and tool an MCP rule names: mcp__github gives
// ("github", ""), mcp__github__create_issue ("github", "create_issue"),
// mcp__github__* ("github", "*"). ok is false for other rules.
func (r Rule) MCP() (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(r.Tool, "mcp__")
	if !ok {
		return "", "", false
	}
	server, tool, _ = strings.Cut(rest, "__")
	return server, tool, true
}
