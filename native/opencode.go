package native

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/tailscale/hujson"
	"go.yaml.in/yaml/v3"
)

// opencode agents (opencode 1.18.33): markdown in {agent,agents}/**/*.md of
// .opencode or the config directory, named by the path below agent/ or
// agents/ without .md (a front matter name replaces it), front matter
// optional, the body, trimmed, the prompt. Keys opencode does not know are
// passed to the model provider as options (reasoningEffort is one).

// ParseOpencode reads an opencode agent file; name is the name its path
// gives (OpencodeName).
func ParseOpencode(file, name string, data []byte) (*Agent, error) {
	if err := checkUTF8(file, data); err != nil {
		return nil, err
	}
	fm := &frontMatter{body: string(data)}
	if hasFrontMatter(data) {
		var err error
		if fm, err = parseFrontMatter(file, data); err != nil {
			return nil, err
		}
	}
	return opencodeAgent(file, name, fm)
}

// ParseOpencodeConfig reads the agent name of the agent map of an opencode
// configuration file (opencode.json or opencode.jsonc): the same keys as
// an agent file's front matter, the prompt a string of its own. ok is
// false when the file has no such agent.
func ParseOpencodeConfig(file, name string, data []byte) (a *Agent, ok bool, err error) {
	entries, err := OpencodeConfigAgents(file, data)
	if err != nil {
		return nil, false, err
	}
	raw, ok := entries[name]
	if !ok {
		return nil, false, nil
	}
	n, err := jsonNode(raw)
	if err != nil || n.Kind != yaml.MappingNode {
		return nil, false, &Error{File: file, Msg: fmt.Sprintf("agent.%s: want an object", name)}
	}
	fm := &frontMatter{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		if fm.get(k) != nil {
			return nil, false, &Error{File: file, Msg: fmt.Sprintf("agent.%s: %s is set twice", name, k)}
		}
		if s, isStr := scalarString(v); k == "prompt" && isStr {
			fm.body = s
			if ref, ok := strings.CutPrefix(s, "{file:"); ok && strings.HasSuffix(ref, "}") {
				// opencode reads the prompt from the file, relative to
				// the configuration's directory.
				// Only a file beside it, in its directory's tree, is read:
				// a configuration from elsewhere (a repository) must not
				// bring in the importer's own files.
				ref = strings.TrimSuffix(ref, "}")
				dir, _ := filepath.Abs(filepath.Dir(file))
				dir, _ = filepath.EvalSymlinks(dir)
				real, err := filepath.EvalSymlinks(filepath.Join(dir, ref))
				if err != nil || filepath.IsAbs(ref) || strings.HasPrefix(ref, "~") || !pathutil.Within(dir, real) {
					return nil, false, &Error{File: file, Msg: fmt.Sprintf("agent.%s.prompt: %s is not a file beside the configuration; copy its text in", name, s)}
				}
				text, err := os.ReadFile(real)
				if err != nil {
					return nil, false, &Error{File: file, Msg: fmt.Sprintf("agent.%s.prompt: %v", name, err)}
				}
				if err := checkUTF8(real, text); err != nil {
					return nil, false, err
				}
				fm.body = string(text)
			}
			continue
		}
		fm.fields = append(fm.fields, field{key: k, value: v})
	}
	a, err = opencodeAgent(file, name, fm)
	var e *Error
	if errors.As(err, &e) && e.Line == 0 {
		// A key of the entry: name it by its path in the file, at its
		// place.
		key, _, _ := strings.Cut(e.Msg, ":")
		e.Msg = "agent." + name + "." + e.Msg
		if std, serr := hujson.Standardize(data); serr == nil {
			if off, ok := diag.Positions(std)["agent."+name+"."+key]; ok {
				e.Line, e.Column = diag.Position(std, off)
			}
		}
	}
	return a, err == nil, err
}

// OpencodeConfigAgents returns the entries of the agent map of an opencode
// configuration file, by name.
func OpencodeConfigAgents(file string, data []byte) (map[string]json.RawMessage, error) {
	if err := checkUTF8(file, data); err != nil {
		return nil, err
	}
	// Standardize keeps every byte where it was (comments and trailing
	// commas become spaces): positions in std are positions in data.
	std, err := hujson.Standardize(data)
	if err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	var cfg map[string]json.RawMessage // opencode's keys match exactly
	if err := json.Unmarshal(std, &cfg); err != nil {
		return nil, diag.JSONError(file, std, err)
	}
	raw, ok := cfg["agent"]
	if !ok {
		return nil, nil
	}
	var agents map[string]json.RawMessage
	if err := json.Unmarshal(raw, &agents); err != nil {
		d := &diag.Diagnostic{File: file, Field: "agent", Message: "must be an object of agents by name"}
		if off, ok := diag.Positions(std)["agent"]; ok {
			d.Line, d.Column = diag.Position(std, off)
		}
		return nil, d
	}
	return agents, nil
}

// opencodeAgent maps an opencode agent's keys and prompt to an Agent.
func opencodeAgent(file, name string, fm *frontMatter) (*Agent, error) {
	a := &Agent{Harness: persona.HarnessOpencode, Name: name, Model: ModelInherit}
	a.Prompt, a.Sidecar = markdownPrompt(fm.body)
	var rest object
	for i := range fm.fields {
		f := &fm.fields[i]
		s, isStr := scalarString(f.value)
		if (f.key == "name" || f.key == "description" || f.key == "model") && !isStr {
			return nil, &Error{File: file, Line: f.line, Msg: f.key + ": want a string"}
		}
		switch {
		case f.key == "name" && isStr && s == kebabID(s):
			a.Name = s
		case f.key == "name" && isStr:
			a.Name = s // and kept as written
			rest.add("name", json.RawMessage(quote(s)))
		case f.key == "description" && isStr:
			a.Description = s
		case f.key == "model" && isStr && s != "":
			a.Model = s
		case f.key == "reasoningEffort" && isStr && (s == "low" || s == "medium" || s == "high"):
			a.Settings.Reasoning = s
		case f.key == "permission" && opencodeMapped(f.value, &a.Permissions):
		default:
			v, err := nodeJSON(f.value)
			if err != nil {
				return nil, &Error{File: file, Line: f.line, Msg: f.key + ": " + err.Error()}
			}
			rest.add(f.key, v)
		}
	}
	if id := kebabID(a.Name); id != a.Name {
		if id == "" {
			return nil, &Error{File: file, Msg: fmt.Sprintf("agent %q: the name gives no persona id (lower-case letters and digits in words joined by -)", a.Name)}
		}
		if fm.get("name") == nil {
			rest.add("name", json.RawMessage(quote(a.Name))) // a name from the path, dir/name
		}
		a.Name = id
	}
	if a.Description == "" {
		// opencode's primary agents need none; a persona does.
		a.Description = a.Name
	}
	a.Rest = rest.raw()
	return a, nil
}

// OpencodeName is the name opencode gives the agent file rel, relative to
// a directory holding agent/ or agents/.
func OpencodeName(rel string) string {
	rel = strings.ReplaceAll(rel, "\\", "/")
	for _, d := range []string{"agent/", "agents/"} {
		if strings.HasPrefix(rel, d) {
			rel = rel[len(d):]
			break
		}
	}
	return strings.TrimSuffix(rel, path.Ext(rel))
}

// scalarString returns the string a scalar node holds.
func scalarString(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return "", false
	}
	return n.Value, true
}

// opencodeMapped sets *p to the persona rules of the permission n when
// they map back to it exactly; else the permission stays as written.
func opencodeMapped(n *yaml.Node, p *persona.Permissions) bool {
	src, err := nodeJSON(n)
	if err != nil {
		return false
	}
	got, ok := opencodePermissions(src)
	if ok {
		*p = got
	}
	return ok
}

// opencodeTools are the persona rule tools of opencode's permission keys.
var opencodeTools = map[string][]string{
	"edit": {"Edit", "Write"}, "read": {"Read"}, "glob": {"Glob"}, "grep": {"Grep"}, "list": {"LS"},
	"bash": {"Bash"}, "webfetch": {"WebFetch"}, "websearch": {"WebSearch"}, "task": {"Task"},
	"todowrite": {"TodoWrite"}, "skill": {"Skill"},
}

var mcpAll = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z0-9-]+)_\*$`) })

// opencodePermissions returns the persona rules whose mapping to opencode
// (harness.OpencodeAgent) is exactly the permission src, in its order;
// ok is false when there are none.
func opencodePermissions(src json.RawMessage) (persona.Permissions, bool) {
	var p persona.Permissions
	ks, vs, err := keys(src)
	if err != nil || len(ks) == 0 {
		return p, false
	}
	add := func(action, rule string) bool {
		switch action {
		case "allow":
			p.Allow = append(p.Allow, rule)
		case "deny":
			p.Deny = append(p.Deny, rule)
		default:
			return false // ask: a persona rule never maps to it
		}
		return true
	}
	for i, k := range ks {
		var action string
		if json.Unmarshal(vs[i], &action) == nil {
			tools, ok := opencodeTools[k]
			if m := mcpAll().FindStringSubmatch(k); !ok && m != nil {
				tools, ok = []string{"mcp__" + m[1]}, true
			}
			if !ok {
				return p, false
			}
			for _, t := range tools {
				if !add(action, t) {
					return p, false
				}
			}
			continue
		}
		pk, pv, err := keys(vs[i])
		if err != nil || (k != "bash" && k != "edit" && k != "read") {
			return p, false
		}
		tool := opencodeTools[k][0]
		for j, pattern := range pk {
			if json.Unmarshal(pv[j], &action) != nil {
				return p, false
			}
			rule := tool + "(" + pattern + ")"
			if k != "bash" {
				rule = tool + "(/" + pattern + ")"
			}
			if !add(action, rule) {
				return p, false
			}
		}
	}
	got, _, err := harness.OpencodeAgent(&persona.Resolved{ID: "agent", Harness: persona.HarnessOpencode, Model: ModelInherit, Permissions: p})
	if err != nil {
		return p, false
	}
	var want, have bytes.Buffer
	if json.Compact(&want, src) != nil || json.Compact(&have, got["permission"]) != nil || want.String() != have.String() {
		return persona.Permissions{}, false
	}
	return p, true
}

// FormatOpencode writes a as an opencode agent file. Its permission rules
// and reasoning become what run gives opencode (harness.OpencodeAgent).
func FormatOpencode(a *Agent) ([]byte, []Dropped, error) {
	r := &persona.Resolved{ID: a.Name, Harness: persona.HarnessOpencode, Model: a.Model, Permissions: a.Permissions}
	r.HarnessSettings.Reasoning = a.Settings.Reasoning
	agent, mapping, err := harness.OpencodeAgent(r)
	if err != nil {
		return nil, nil, err
	}
	var dropped []Dropped
	for _, f := range mapping.Refused() {
		dropped = append(dropped, Dropped{Field: f.Field, Value: f.Value, Why: f.Refused})
	}
	entries := []entry{{"description", str(a.Description)}}
	for _, k := range []string{"model", "reasoningEffort", "permission"} {
		raw, ok := agent[k]
		if !ok {
			continue
		}
		n, err := jsonNode(raw)
		if err != nil {
			return nil, nil, err
		}
		entries = append(entries, entry{k, n})
	}
	rest, more, err := restEntries(persona.HarnessOpencode, a.Rest, func(k string) bool {
		_, set := agent[k]
		return k == "description" || set
	})
	if err != nil {
		return nil, nil, err
	}
	dropped = append(dropped, more...)
	out, err := formatMarkdown(append(entries, rest...), joinSidecar(a.Prompt, a.Sidecar))
	return out, dropped, err
}

// quote is s as a JSON string.
func quote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
