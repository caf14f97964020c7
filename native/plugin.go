package native

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/skillmd"
	"github.com/seed-3bc194a6/workforce/persona"
)

// A pack is also a plugin (Plugin): beside the persona files, it holds a
// Claude Code plugin (.claude-plugin/plugin.json, agents/, skills/,
// .mcp.json), which `claude --plugin-dir` loads, and a codex plugin
// manifest (.codex-plugin/plugin.json) for its skills; codex plugins carry
// no agents. Measured with Claude Code 2.1.330 and codex 0.169.0.
//
// Each persona gives a Claude Code agent per tier that runs on claude
// (agents/ID.md for a persona without tiers or with one such tier,
// agents/ID-TIER.md for each of several); a persona with no claude tier
// gives agents/ID.md from its default tier, on claude's own default model
// (its tier's model names another harness's). Claude Code ignores a plugin
// agent's permissionMode and mcpServers: the servers go to the plugin's
// .mcp.json, and the mode is left out with a note. Local and inline
// skills are written to skills/NAME/ (NAME the one in its SKILL.md); fetched ones (npm, skills.sh, prpm)
// are not bundled.

// Plugin names a plugin: its name (kebab-case, no spaces), version and
// description.
type Plugin struct {
	Name, Version, Description string
}

// PluginName is the plugin name of an npm package name: without its
// scope.
func PluginName(pkg string) string {
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		pkg = pkg[i+1:]
	}
	return strings.ReplaceAll(pkg, " ", "-")
}

// PluginFile is a file of a plugin.
type PluginFile struct {
	Data []byte
	Exec bool // a skill's script
}

// PluginFiles returns the files of the plugin of personas, by path, and
// notes on what the plugin leaves out.
func PluginFiles(pl Plugin, personas []*persona.Persona) (map[string]PluginFile, []string, error) {
	files := map[string]PluginFile{}
	var notes []string
	servers := map[string]persona.MCPServer{}
	serverFrom := map[string]string{}
	skillFrom := map[string]string{}
	put := func(p string, f PluginFile) error {
		if old, ok := files[p]; ok && (!bytes.Equal(old.Data, f.Data) || old.Exec != f.Exec) {
			return fmt.Errorf("plugin file %s would be written twice, differently", p)
		}
		files[p] = f
		return nil
	}
	for _, p := range personas {
		type job struct{ tier, name string }
		var jobs []job
		var claudeTiers []string
		for _, t := range p.Spec.TierNames() {
			if rt := p.Spec.TierRuntime(t); rt != nil && rt.Harness == persona.HarnessClaude {
				claudeTiers = append(claudeTiers, t)
			}
		}
		switch {
		case p.Spec.Flat() || len(claudeTiers) == 1:
			t := p.Spec.EffectiveDefaultTier()
			if len(claudeTiers) == 1 {
				t = claudeTiers[0]
			}
			jobs = []job{{t, p.ID}}
		case len(claudeTiers) > 1:
			for _, t := range claudeTiers {
				jobs = append(jobs, job{t, p.ID + "-" + t})
			}
		default:
			jobs = []job{{p.Spec.EffectiveDefaultTier(), p.ID}}
		}
		for _, j := range jobs {
			r, err := p.Resolve(j.tier)
			if err != nil {
				return nil, nil, err
			}
			rc := *r
			if rc.Harness != persona.HarnessClaude {
				rc.Model = ModelInherit
				notes = append(notes, fmt.Sprintf("%s: no tier runs on claude; its agent runs tier %s on claude's own default model", p.ID, j.tier))
			}
			for name, s := range rc.MCPServers {
				if other, ok := servers[name]; ok && !reflect.DeepEqual(other, s) {
					return nil, nil, fmt.Errorf("MCP server %s of %s differs from the one of %s; a plugin has one .mcp.json", name, p.ID, serverFrom[name])
				}
				servers[name], serverFrom[name] = s, p.ID
			}
			rc.MCPServers = nil
			if m := rc.Permissions.Mode; m != "" {
				notes = append(notes, fmt.Sprintf("%s: permissions.mode %s is left out: Claude Code ignores a plugin agent's permissionMode", j.name, m))
				rc.Permissions.Mode = ""
			}
			if n := rc.Native; n != nil && len(n.Claude) > 0 {
				// Keys Claude Code ignores in a plugin's agent, with a
				// warning each: left out, and said so.
				ignored := []string{"permissionMode", "hooks", "mcpServers", "initialPrompt", "observer", "observerMessage", "observeSubagents"}
				if kept := withoutKeys(n.Claude, ignored...); len(kept) != len(n.Claude) {
					for _, k := range ignored {
						if _, ok := restValueRaw(n.Claude, k); ok {
							notes = append(notes, fmt.Sprintf("%s: native.claude.%s is left out: Claude Code ignores it in a plugin's agent", j.name, k))
						}
					}
					c := *n
					c.Claude = kept
					rc.Native = &c
				}
			}
			skills := rc.Skills
			rc.Skills = nil
			f, err := Export(p.Spec.Description, &rc, persona.HarnessClaude, j.name)
			if err != nil {
				return nil, nil, fmt.Errorf("%s@%s: %w", p.ID, j.tier, err)
			}
			for _, d := range f.Dropped {
				notes = append(notes, fmt.Sprintf("%s: the agent file cannot say %s", j.name, d))
			}
			if err := put("agents/"+f.Name, PluginFile{Data: f.Data}); err != nil {
				return nil, nil, err
			}
			for _, sk := range skills {
				c, err := persona.ReadSkill(sk)
				if err != nil {
					notes = append(notes, fmt.Sprintf("%s: skill %s is not bundled: %v", p.ID, sk.ID, err))
					continue
				}
				// The directory is named by SKILL.md's name, which is
				// validated, as install names it.
				if err := skillmd.ValidateName(c.Name); err != nil {
					return nil, nil, fmt.Errorf("%s: skill %s: name %w", p.ID, sk.ID, err)
				}
				skillFrom[c.Name] = p.ID // the same files twice are fine; put refuses others
				for _, sf := range c.Files {
					if err := put(path.Join("skills", c.Name, sf.Path), PluginFile{Data: sf.Data, Exec: sf.Exec}); err != nil {
						return nil, nil, fmt.Errorf("skill %s of %s: %w", sk.ID, p.ID, err)
					}
				}
			}
		}
	}
	manifest := map[string]any{"name": pl.Name}
	if pl.Version != "" {
		manifest["version"] = pl.Version
	}
	if pl.Description != "" {
		manifest["description"] = pl.Description
	}
	claude, err := indentJSON(manifest)
	if err != nil {
		return nil, nil, err
	}
	files[".claude-plugin/plugin.json"] = PluginFile{Data: claude}
	if len(skillFrom) > 0 {
		manifest["skills"] = "./skills/"
	}
	codex, err := indentJSON(manifest)
	if err != nil {
		return nil, nil, err
	}
	files[".codex-plugin/plugin.json"] = PluginFile{Data: codex}
	if len(servers) > 0 {
		mcp, err := indentJSON(map[string]any{"mcpServers": servers})
		if err != nil {
			return nil, nil, err
		}
		files[".mcp.json"] = PluginFile{Data: mcp}
	}
	return files, notes, nil
}

func indentJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	return buf.Bytes(), err
}
