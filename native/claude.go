package native

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/seed-3bc194a6/workforce/persona"
	"go.yaml.in/yaml/v3"
)

// Claude Code subagents (Claude Code 2.1.330): markdown in .claude/agents/
// (any depth, from the working directory up to the git root) and
// ~/.claude/agents/, named by the front matter's name (a file without one is
// skipped), with a required description; the body, trimmed, is the prompt.
// tools is an allowlist and disallowedTools takes tools away whole: a rule
// such as Bash(git push:*) there removes all of Bash, so only bare tool
// names map to persona deny rules. mcpServers is a list of configured
// server names or one-key maps of a name to a server. Unknown keys are
// ignored by Claude Code, with a warning.

// bareTool is a tool name without a rule.
var bareTool = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`) })

// ParseClaude reads a Claude Code subagent file.
func ParseClaude(file string, data []byte) (*Agent, error) { return parseClaude(file, data, "") }

// parseClaude reads a Claude Code subagent file; a plugin's agent (named,
// when its file names none, pluginName: its path below agents/) may leave
// out its name and description.
func parseClaude(file string, data []byte, pluginName string) (*Agent, error) {
	fm, err := parseFrontMatter(file, data)
	if err != nil {
		return nil, err
	}
	a := &Agent{Harness: persona.HarnessClaude, Model: ModelInherit}
	fail := func(f *field, msg string) error {
		return &Error{File: file, Line: f.line, Msg: f.key + ": " + msg}
	}
	for _, key := range []string{"name", "description"} {
		f := fm.get(key)
		if f == nil && pluginName != "" {
			if key == "name" {
				if a.Name = kebabID(pluginName); a.Name == "" {
					return nil, &Error{File: file, Msg: fmt.Sprintf("%q gives no persona id", pluginName)}
				}
			} else {
				a.Description = "Agent " + pluginName + " of a plugin"
			}
			continue
		}
		if f == nil {
			return nil, &Error{File: file, Line: 1, Msg: key + ": missing; Claude Code needs it in the front matter"}
		}
		s, ok := scalarString(f.value)
		if !ok || strings.TrimSpace(s) == "" {
			return nil, fail(f, "want a non-empty string")
		}
		if key == "name" {
			if a.Name = kebabID(s); a.Name == "" {
				return nil, fail(f, fmt.Sprintf("%q gives no persona id (lower-case letters and digits in words joined by -)", s))
			}
		} else {
			a.Description = s
		}
	}
	a.Prompt, a.Sidecar = markdownPrompt(fm.body)
	var rest object
	for i := range fm.fields {
		f := &fm.fields[i]
		s, isStr := scalarString(f.value)
		mapped := false
		switch f.key {
		case "name":
			mapped = s == a.Name // else kept as written
		case "description":
			continue
		case "model":
			if !isStr || strings.TrimSpace(s) == "" {
				return nil, fail(f, "want a model name, an alias such as sonnet, or inherit")
			}
			a.Model, mapped = strings.TrimSpace(s), true
			if strings.EqualFold(a.Model, ModelInherit) {
				// Written out, inherit is the parent's model; left out,
				// a configured default subagent model may win: the
				// native block says which.
				a.Model, mapped = ModelInherit, false
			}
		case "effort":
			if isStr && (s == "low" || s == "medium" || s == "high") {
				a.Settings.Reasoning, mapped = s, true
			}
		case "permissionMode":
			if isStr && slices.Contains([]string{"default", "acceptEdits", "bypassPermissions", "plan", "dontAsk"}, s) {
				a.Permissions.Mode, mapped = s, true
			}
		case "disallowedTools":
			if tools, ok := toolList(f.value); ok && len(tools) > 0 && !slices.ContainsFunc(tools, func(t string) bool { return !bareTool().MatchString(t) }) {
				a.Permissions.Deny, mapped = tools, true
			}
		case "mcpServers":
			if servers, ok := claudeServers(f.value); ok {
				a.MCPServers, mapped = servers, true
			}
		}
		if mapped {
			continue
		}
		v, err := nodeJSON(f.value)
		if err != nil {
			return nil, fail(f, err.Error())
		}
		rest.add(f.key, v)
	}
	a.Rest = rest.raw()
	return a, nil
}

// toolList reads a tools field: a list, or a string of names separated by
// commas or by spaces outside parentheses, as Claude Code splits it.
func toolList(n *yaml.Node) ([]string, bool) {
	switch n.Kind {
	case yaml.SequenceNode:
		var out []string
		for _, c := range n.Content {
			s, ok := scalarString(c)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	case yaml.ScalarNode:
		s, ok := scalarString(n)
		if !ok {
			return nil, false
		}
		var out []string
		depth, start := 0, 0
		flush := func(end int) {
			if t := strings.TrimSpace(s[start:end]); t != "" {
				out = append(out, t)
			}
			start = end + 1
		}
		for i, r := range s {
			switch {
			case r == '(':
				depth++
			case r == ')':
				depth--
			case depth == 0 && (r == ',' || r == ' '):
				flush(i)
			}
		}
		flush(len(s))
		return out, true
	}
	return nil, false
}

// claudeServers maps a list of one-key maps of a name to a server to
// persona servers, when each is one a persona server says exactly.
func claudeServers(n *yaml.Node) (map[string]persona.MCPServer, bool) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, false
	}
	out := map[string]persona.MCPServer{}
	for _, item := range n.Content {
		if item.Kind != yaml.MappingNode || len(item.Content) != 2 {
			return nil, false
		}
		name := item.Content[0].Value
		raw, err := nodeJSON(item.Content[1])
		if err != nil {
			return nil, false
		}
		var s persona.MCPServer
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if dec.Decode(&s) != nil {
			return nil, false
		}
		normalize(&s)
		if s.Type == "" && s.Command != "" {
			s.Type = "stdio"
		}
		switch {
		case s.Type == "stdio" && s.Command != "" && s.URL == "" && s.Headers == nil:
		case (s.Type == "http" || s.Type == "sse") && s.URL != "" && s.Command == "" && s.Args == nil && s.Env == nil:
		default:
			return nil, false
		}
		if _, dup := out[name]; dup {
			return nil, false
		}
		out[name] = s
	}
	return out, true
}

// FormatClaude writes a as a Claude Code subagent file; skills are the
// persona's, named in the file (their files are not written).
func FormatClaude(a *Agent, skills []persona.Skill) ([]byte, []Dropped, error) {
	var dropped []Dropped
	name, _ := nameValue(a.Rest)
	if name == "" {
		name = a.Name
	}
	entries := []entry{{"name", str(name)}, {"description", str(a.Description)}}
	switch m, _ := restValue(a.Rest, "model"); {
	case a.Model != "" && a.Model != ModelInherit:
		entries = append(entries, entry{"model", str(strings.TrimPrefix(a.Model, "anthropic/"))})
	case m != "":
		entries = append(entries, entry{"model", str(m)}) // inherit, written out
	}
	if v := a.Settings.Reasoning; v != "" {
		entries = append(entries, entry{"effort", str(v)})
	}
	p := a.Permissions
	if p.Mode != "" {
		entries = append(entries, entry{"permissionMode", str(p.Mode)})
	}
	for _, rule := range p.Allow {
		dropped = append(dropped, Dropped{"permissions.allow", rule, "a subagent's tools is an allowlist of what it has, not of what runs without asking"})
	}
	var deny []string
	for _, rule := range p.Deny {
		if !bareTool().MatchString(rule) {
			dropped = append(dropped, Dropped{"permissions.deny", rule, "disallowedTools takes tools away whole; a rule would take all of " + strings.SplitN(rule, "(", 2)[0]})
			continue
		}
		deny = append(deny, rule)
	}
	if len(deny) > 0 {
		entries = append(entries, entry{"disallowedTools", str(strings.Join(deny, ", "))})
	}
	if len(a.MCPServers) > 0 {
		list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, name := range sortedKeys(a.MCPServers) {
			raw, err := json.Marshal(a.MCPServers[name])
			if err != nil {
				return nil, nil, err
			}
			v, err := jsonNode(raw)
			if err != nil {
				return nil, nil, err
			}
			list.Content = append(list.Content, &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{str(name), v}})
		}
		entries = append(entries, entry{"mcpServers", list})
	}
	if len(skills) > 0 {
		list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, s := range skills {
			list.Content = append(list.Content, str(s.ID))
		}
		entries = append(entries, entry{"skills", list})
		for _, s := range skills {
			dropped = append(dropped, Dropped{"skills", s.ID, "named in the file; Claude Code finds it in .claude/skills or a plugin's skills/ (workforce pack writes a plugin with it)"})
		}
	}
	// The name and model the native block holds were written above.
	rest, more, err := restEntries(persona.HarnessClaude, withoutKeys(a.Rest, "name", "model"), func(k string) bool {
		return slices.ContainsFunc(entries, func(e entry) bool { return e.key == k })
	})
	if err != nil {
		return nil, nil, err
	}
	dropped = append(dropped, more...)
	out, err := formatMarkdown(append(entries, rest...), joinSidecar(a.Prompt, a.Sidecar))
	return out, dropped, err
}
