package native

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/seed-3bc194a6/workforce/internal/skillmd"
	"github.com/seed-3bc194a6/workforce/persona"
)

// scanDir is a directory Find reads agent files of a harness from; name,
// when set, names an agent by its path (opencode).
type scanDir struct {
	dir, harness string
	recursive    bool
	name         func(string) string
}

// Source is an agent file found by Find.
type Source struct {
	Path    string
	Harness string
	// Name is the agent's name as its path gives it: opencode's, and a
	// Claude Code plugin's agent's when its file names none; empty for the
	// others, whose name is in the file.
	Name string
	// Config says the agent is an entry named Name of the agent map of an
	// opencode configuration file.
	Config bool
}

// Read parses the agent file.
func (s Source) Read() (*Agent, error) {
	data, err := os.ReadFile(s.Path)
	if err != nil {
		return nil, err
	}
	switch s.Harness {
	case persona.HarnessClaude:
		return parseClaude(s.Path, data, s.Name)
	case persona.HarnessOpencode:
		if s.Config {
			a, _, err := ParseOpencodeConfig(s.Path, s.Name, data)
			return a, err
		}
		return ParseOpencode(s.Path, s.Name, data)
	case persona.HarnessCodex:
		return ParseCodex(s.Path, data)
	}
	if persona.IsKnownHarness(s.Harness) {
		return nil, fmt.Errorf("%s: workforce reads no agent file of %s; it reads those of %s", s.Path, s.Harness, strings.Join(Formats, ", "))
	}
	return nil, fmt.Errorf("%s: unknown harness %q", s.Path, s.Harness)
}

// opencodeBuiltin are opencode's own agents, which an agent map entry
// configures rather than defines.
var opencodeBuiltin = map[string]bool{"build": true, "plan": true, "general": true, "explore": true, "title": true, "summary": true, "compaction": true}

// disabled reports whether an agent map entry turns its agent off.
func disabled(raw json.RawMessage) bool {
	var e struct {
		Disable bool `json:"disable"`
	}
	return json.Unmarshal(raw, &e) == nil && e.Disable
}

// Find lists the agent files at path: the file itself, or below a
// directory the agents directories each harness reads (.claude/agents,
// .opencode/agent and agents, .codex/agents), a Claude Code plugin's
// agents/ (beside .claude-plugin/plugin.json), or, in a directory that is
// none of these, its own agent files. The harness of a file comes from
// where it is (or its .toml extension: codex); harness, when set, is the
// harness of files whose place does not tell, and limits the places read
// to that harness's.
func Find(path, harness string) ([]Source, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		s, err := classify(path, harness)
		if err != nil {
			return nil, err
		}
		return []Source{s}, nil
	}
	var out []Source
	found := false
	scan := func(dir, h string, recursive bool, name func(rel string) string) error {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil
		}
		if harness != "" && harness != h {
			return nil // another harness's agents: not asked for
		}
		found = true
		ext := ".md"
		if h == persona.HarnessCodex {
			ext = ".toml"
		}
		return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != dir && !recursive {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || filepath.Ext(p) != ext {
				return nil
			}
			s := Source{Path: p, Harness: h}
			if name != nil {
				rel, _ := filepath.Rel(filepath.Dir(dir), p)
				s.Name = name(filepath.ToSlash(rel))
			}
			out = append(out, s)
			return nil
		})
	}
	steps := []scanDir{
		{filepath.Join(path, ".claude", "agents"), persona.HarnessClaude, true, nil},
		{filepath.Join(path, ".opencode", "agent"), persona.HarnessOpencode, true, OpencodeName},
		{filepath.Join(path, ".opencode", "agents"), persona.HarnessOpencode, true, OpencodeName},
		{filepath.Join(path, ".codex", "agents"), persona.HarnessCodex, true, nil},
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	base, parent := filepath.Base(abs), filepath.Base(filepath.Dir(abs))
	switch {
	case base == "agents" && parent == ".claude":
		steps = append(steps, scanDir{path, persona.HarnessClaude, true, nil})
	case base == "agents" && parent == ".codex":
		steps = append(steps, scanDir{path, persona.HarnessCodex, true, nil})
	case (base == "agent" || base == "agents") && (parent == ".opencode" || parent == "opencode"):
		steps = append(steps, scanDir{path, persona.HarnessOpencode, true, OpencodeName})
	case base == "opencode":
		// opencode's own configuration directory (~/.config/opencode).
		for _, d := range []string{"agent", "agents"} {
			steps = append(steps, scanDir{filepath.Join(path, d), persona.HarnessOpencode, true, OpencodeName})
		}
	}
	if _, err := os.Stat(filepath.Join(path, ".claude-plugin", "plugin.json")); err == nil {
		// A plugin's agent may leave out its name (Claude Code then names
		// it by its path below agents/) and its description.
		steps = append(steps, scanDir{filepath.Join(path, "agents"), persona.HarnessClaude, true, func(rel string) string {
			return strings.TrimSuffix(strings.TrimPrefix(rel, "agents/"), ".md")
		}})
	}
	for _, st := range steps {
		if err := scan(st.dir, st.harness, st.recursive, st.name); err != nil {
			return nil, err
		}
	}
	// The agent maps of opencode's configuration files.
	var configs []string
	for _, name := range []string{"opencode.json", "opencode.jsonc"} {
		configs = append(configs, filepath.Join(path, name), filepath.Join(path, ".opencode", name))
	}
	for _, cfg := range configs {
		data, err := os.ReadFile(cfg)
		if err != nil {
			continue
		}
		agents, err := OpencodeConfigAgents(cfg, data)
		if err != nil {
			return nil, err
		}
		if harness != "" && harness != persona.HarnessOpencode {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(agents)) {
			if opencodeBuiltin[name] || disabled(agents[name]) {
				continue // settings of opencode's own agents, or an agent turned off
			}
			out = append(out, Source{Path: cfg, Harness: persona.HarnessOpencode, Name: name, Config: true})
			found = true
		}
	}
	if !found {
		// A directory of agent files.
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.Type().IsRegular() && (strings.HasSuffix(e.Name(), ".md") || strings.HasSuffix(e.Name(), ".toml")) {
				s, err := classify(filepath.Join(path, e.Name()), harness)
				if err != nil {
					return nil, err
				}
				out = append(out, s)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no agent files (.claude/agents, .opencode/agent, .opencode/agents, .codex/agents, a Claude Code plugin's agents/, or .md and .toml files)", path)
	}
	slices.SortStableFunc(out, func(a, b Source) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// classify tells the harness of one agent file from its place.
func classify(path, harness string) (Source, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Source{}, err
	}
	slash := filepath.ToSlash(abs)
	s := Source{Path: path}
	switch {
	case strings.HasSuffix(path, ".toml"):
		s.Harness = persona.HarnessCodex
	case strings.Contains(slash, "/.claude/agents/"):
		s.Harness = persona.HarnessClaude
	case strings.Contains(slash, "/.opencode/agent/"), strings.Contains(slash, "/.opencode/agents/"):
		s.Harness = persona.HarnessOpencode
	case strings.HasSuffix(path, ".md"):
		if harness == "" {
			return s, fmt.Errorf("%s: cannot tell which harness this agent file is for; give --harness claude or --harness opencode", path)
		}
		s.Harness = harness
	default:
		return s, fmt.Errorf("%s: not an agent file (.md or .toml)", path)
	}
	if harness != "" && harness != s.Harness {
		return s, fmt.Errorf("%s is a %s agent file, not a %s one", path, s.Harness, harness)
	}
	if s.Harness == persona.HarnessOpencode {
		s.Name = strings.TrimSuffix(filepath.Base(path), ".md")
		if i := max(strings.LastIndex(slash, "/.opencode/agent/"), strings.LastIndex(slash, "/.opencode/agents/")); i >= 0 {
			s.Name = OpencodeName(slash[i+len("/.opencode/"):])
		}
	}
	return s, nil
}

// Imported is the persona an agent file makes.
type Imported struct {
	Agent  *Agent
	Spec   *persona.Spec
	Source string
}

// Import reads the agent files at path (Find) and makes their personas.
// The agents of a Claude Code plugin get the plugin's skills
// (skills/NAME/SKILL.md, as local skills) and MCP servers (.mcp.json),
// which Claude Code gives every agent of the plugin. Two agents of one
// name are an error.
func Import(path, harness string) ([]Imported, error) {
	sources, err := Find(path, harness)
	if err != nil {
		return nil, err
	}
	var skills []persona.Skill
	var servers map[string]persona.MCPServer
	if root, ok := pluginRoot(path); ok {
		if skills, err = pluginSkills(root); err != nil {
			return nil, err
		}
		if servers, err = pluginServers(root); err != nil {
			return nil, err
		}
	}
	var out []Imported
	from := map[string]string{}
	for _, src := range sources {
		a, err := src.Read()
		if err != nil {
			return nil, err
		}
		if other, dup := from[a.Name]; dup {
			return nil, fmt.Errorf("%s and %s both define agent %s", other, src.Path, a.Name)
		}
		from[a.Name] = src.Path
		spec := a.Spec()
		if src.Harness == persona.HarnessClaude {
			if named, ok := claudeSkills(src.Path, a.Rest); ok {
				// The skills the agent names, found where Claude Code
				// finds them: persona skills, read from there.
				a.Rest = withoutKeys(a.Rest, "skills")
				spec = a.Spec()
				spec.Skills = named
			}
		}
		if src.Harness == persona.HarnessClaude && (len(skills) > 0 || len(servers) > 0) {
			for _, sk := range skills {
				if !slices.ContainsFunc(spec.Skills, func(o persona.Skill) bool { return o.ID == sk.ID }) {
					spec.Skills = append(spec.Skills, sk)
				}
			}
			for name, s := range servers {
				if _, own := spec.MCPServers[name]; own {
					continue
				}
				if spec.MCPServers == nil {
					spec.MCPServers = map[string]persona.MCPServer{}
				}
				spec.MCPServers[name] = s
			}
		}
		out = append(out, Imported{Agent: a, Spec: spec, Source: src.Path})
	}
	return out, nil
}

// pluginRoot returns the Claude Code plugin directory path is, when it is
// one (it holds .claude-plugin/plugin.json).
func pluginRoot(path string) (string, bool) {
	if _, err := os.Stat(filepath.Join(path, ".claude-plugin", "plugin.json")); err != nil {
		return "", false
	}
	abs, err := filepath.Abs(path)
	return abs, err == nil
}

// pluginSkills returns the skills of the plugin at root, as local skills
// anchored there.
func pluginSkills(root string) ([]persona.Skill, error) {
	entries, err := os.ReadDir(filepath.Join(root, "skills"))
	if err != nil {
		return nil, nil
	}
	var out []persona.Skill
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, "skills", e.Name())
		if _, err := os.Stat(filepath.Join(dir, "SKILL.md")); err != nil {
			continue
		}
		sk := persona.Skill{ID: e.Name(), Source: "./skills/" + e.Name(), Path: dir, Within: root}
		if _, err := persona.ReadSkill(sk); err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		out = append(out, sk)
	}
	return out, nil
}

// pluginServers returns the MCP servers of the plugin's .mcp.json
// ({"mcpServers": {...}} or the map alone, as Claude Code reads it).
func pluginServers(root string) (map[string]persona.MCPServer, error) {
	file := filepath.Join(root, ".mcp.json")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil
	}
	if err := checkUTF8(file, data); err != nil {
		return nil, err
	}
	var wrapped struct {
		MCPServers map[string]persona.MCPServer `json:"mcpServers"`
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, diag.JSONError(file, data, err)
	}
	if _, ok := top["mcpServers"]; ok {
		if err := json.Unmarshal(data, &wrapped); err != nil {
			return nil, diag.JSONError(file, data, err)
		}
		if wrapped.MCPServers != nil {
			return fixTypes(wrapped.MCPServers), nil
		}
	}
	var flat map[string]persona.MCPServer
	if err := json.Unmarshal(data, &flat); err != nil {
		return nil, diag.JSONError(file, data, err)
	}
	return fixTypes(flat), nil
}

// fixTypes gives servers without a type the one Claude Code infers.
func fixTypes(m map[string]persona.MCPServer) map[string]persona.MCPServer {
	for name, s := range m {
		if s.Type == "" && s.Command != "" {
			s.Type = "stdio"
		}
		normalize(&s)
		m[name] = s
	}
	return m
}

// claudeSkills returns, as local persona skills, the skills a Claude Code
// agent file names (its skills key, in the native block), when each is a
// skill directory beside the agents directory holding the file
// (.claude/skills/NAME beside .claude/agents, a plugin's skills/NAME
// beside its agents/); ok is false otherwise, and the names stay as
// written.
func claudeSkills(file string, rest json.RawMessage) ([]persona.Skill, bool) {
	raw, ok := restValueRaw(rest, "skills")
	if !ok {
		return nil, false
	}
	n, err := jsonNode(raw)
	if err != nil {
		return nil, false
	}
	names, ok := toolList(n)
	if !ok || len(names) == 0 {
		return nil, false
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, false
	}
	dir := filepath.Dir(abs)
	for filepath.Base(dir) != "agents" {
		up := filepath.Dir(dir)
		if up == dir {
			return nil, false
		}
		dir = up
	}
	root := filepath.Dir(dir) // .claude, or the plugin's root
	var out []persona.Skill
	for _, name := range names {
		if skillmd.ValidateName(name) != nil {
			return nil, false
		}
		sk := persona.Skill{ID: name, Source: "./skills/" + name, Path: filepath.Join(root, "skills", name), Within: root}
		if _, err := persona.ReadSkill(sk); err != nil {
			return nil, false
		}
		out = append(out, sk)
	}
	return out, true
}
