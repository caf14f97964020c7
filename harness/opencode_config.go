package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/seed-3bc194a6/workforce/internal/frontmatter"
	"github.com/seed-3bc194a6/workforce/internal/quote"
)

// OpencodeRanking is the order in which opencode merges its configuration
// sources, lowest first: a later source's values replace an earlier one's
// key by key (objects are merged, the lists plugin and instructions are
// joined). Read in the source bundled with the version Measured names and
// measured with it (e2e TestOpencodeProjectConfig: a repository's
// opencode.json defining the persona's agent with another prompt and
// webfetch "allow" reaches the model as neither). The persona's agent goes
// into the source marked Workforce, the highest a process can set without
// replacing the administrator's managed configuration; the stand-in
// harness (internal/standin) merges in the same order.
var OpencodeRanking = struct {
	Measured string
	Sources  []OpencodeSource
}{opencodeMeasured, []OpencodeSource{
	{Name: "remote", What: "the configuration a well-known login serves (URL/.well-known/opencode)"},
	{Name: "global", What: "the user's opencode directory (~/.config/opencode): config.json, opencode.json, opencode.jsonc"},
	{Name: "OPENCODE_CONFIG", What: "the file OPENCODE_CONFIG names (workforce's session file: the user's own OPENCODE_CONFIG with the persona's agent)"},
	{Name: "project", What: "opencode.jsonc and opencode.json from the working directory up to the worktree", Project: true},
	{Name: ".opencode", What: "each .opencode directory (the project's from the working directory up to the worktree, ~/.opencode, and the user's opencode directory and OPENCODE_CONFIG_DIR): its opencode.json and opencode.jsonc, then agent/ and agents/**/NAME.md, mode/ and modes/NAME.md, plugin/ and plugins/*.{ts,js}", Project: true},
	{Name: "OPENCODE_CONFIG_CONTENT", What: "the JSON in OPENCODE_CONFIG_CONTENT: the user's own, with the persona's agent and MCP servers", Workforce: true},
	{Name: "account", What: "the opencode console account's organisation configuration"},
	{Name: "managed", What: "the managed directory /etc/opencode (OPENCODE_TEST_MANAGED_CONFIG_DIR moves it): opencode.json, opencode.jsonc"},
	{Name: "mode", What: "then each mode.NAME of the merged configuration over agent.NAME (a project's mode.NAME outranks every source), and OPENCODE_PERMISSION over the top-level permission"},
}}

// OpencodeSource is one of opencode's configuration sources.
type OpencodeSource struct {
	// Name is a short name, What the files or variable it is.
	Name, What string
	// Project is set for the sources a repository writes.
	Project bool
	// Workforce marks the source workforce puts the persona's agent in.
	Workforce bool
}

// opencodeContentMax is the most OPENCODE_CONFIG_CONTENT may hold: Linux
// refuses to start a program with a longer environment string.
const opencodeContentMax = 128<<10 - 1 - len("OPENCODE_CONFIG_CONTENT=")

// opencodeContent is the value of OPENCODE_CONFIG_CONTENT for a run: the
// user's own (a JSON object, kept as written) with the persona's agent
// under its id, the persona's MCP servers, and the base URL at
// workforce's broker of each provider whose key the run brokers
// (provider.ID.options.baseURL, the other options of the user's kept),
// which then outrank every project source of opencode's ranking.
func opencodeContent(user, id string, agent json.RawMessage, mcp map[string]json.RawMessage, brokers, keys map[string]string) (string, error) {
	cfg := map[string]json.RawMessage{}
	if strings.TrimSpace(user) != "" {
		std, err := hujson.Standardize([]byte(user))
		if err == nil {
			err = json.Unmarshal(std, &cfg)
		}
		if err != nil {
			return "", fmt.Errorf("cannot merge the persona's agent into your OPENCODE_CONFIG_CONTENT: it is not a JSON object: %v", err)
		}
	}
	merge := func(key, name string, v json.RawMessage) error {
		m := map[string]json.RawMessage{}
		if raw, ok := cfg[key]; ok {
			if err := json.Unmarshal(raw, &m); err != nil {
				return fmt.Errorf("cannot merge the persona's agent into your OPENCODE_CONFIG_CONTENT: its %s is not an object: %v", key, err)
			}
		}
		m[name] = v
		b, err := json.Marshal(m)
		cfg[key] = b
		return err
	}
	if err := merge("agent", id, agent); err != nil {
		return "", err
	}
	for _, name := range slices.Sorted(maps.Keys(mcp)) {
		if err := merge("mcp", name, mcp[name]); err != nil {
			return "", err
		}
	}
	if len(brokers) > 0 {
		providers := map[string]map[string]any{}
		if raw, ok := cfg["provider"]; ok {
			if err := json.Unmarshal(raw, &providers); err != nil {
				return "", fmt.Errorf("cannot point opencode's providers at workforce's broker in your OPENCODE_CONFIG_CONTENT: its provider is not an object of objects: %v", err)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(brokers)) {
			p := providers[name]
			if p == nil {
				p = map[string]any{}
			}
			opts, _ := p["options"].(map[string]any)
			if opts == nil {
				opts = map[string]any{}
			}
			opts["baseURL"] = brokers[name]
			p["options"] = opts
			providers[name] = p
		}
		b, err := json.Marshal(providers)
		if err != nil {
			return "", err
		}
		cfg["provider"] = b
	}
	if len(keys) > 0 {
		// The placeholders of the keys your configuration writes itself,
		// over every source of lower rank.
		raw, err := opencodeProviderKeys(cfg["provider"], keys, true)
		if err != nil {
			return "", fmt.Errorf("cannot put the brokered keys' placeholders into your OPENCODE_CONFIG_CONTENT: %v", err)
		}
		cfg["provider"] = raw
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return "", err
	}
	if len(b) > opencodeContentMax {
		return "", fmt.Errorf("the persona's opencode agent is %d bytes of JSON, more than the %d an environment variable (OPENCODE_CONFIG_CONTENT) can hold: shorten its system prompt", len(b), opencodeContentMax)
	}
	return string(b), nil
}

// opencodeProviderKeys returns the provider object raw (nil: none) with
// options.apiKey of each provider of keys set to its placeholder, or
// removed for "": only where it is set already unless all, which sets
// each placeholder (and leaves the others absent). nil when raw is nil and
// nothing is set.
func opencodeProviderKeys(raw json.RawMessage, keys map[string]string, all bool) (json.RawMessage, error) {
	providers := map[string]map[string]any{}
	if raw != nil {
		if err := json.Unmarshal(raw, &providers); err != nil {
			return nil, fmt.Errorf("provider is not an object of objects: %v", err)
		}
	}
	changed := false
	for _, id := range slices.Sorted(maps.Keys(keys)) {
		p := providers[id]
		opts, _ := p["options"].(map[string]any)
		_, has := opts["apiKey"]
		switch {
		case keys[id] == "" && has:
			delete(opts, "apiKey")
		case keys[id] != "" && (has || all):
			if p == nil {
				p = map[string]any{}
				providers[id] = p
			}
			if opts == nil {
				opts = map[string]any{}
				p["options"] = opts
			}
			opts["apiKey"] = keys[id]
		default:
			continue
		}
		changed = true
	}
	if !changed {
		return raw, nil
	}
	return json.Marshal(providers)
}

// ProjectConfigError is a run refused because the project's own
// configuration of the harness would change the persona's meaning in a
// way workforce's configuration cannot outrank.
type ProjectConfigError struct {
	Harness, Persona string
	// Conflicts name each file and field, and why, one a line.
	Conflicts []string
}

func (e *ProjectConfigError) Error() string {
	return fmt.Sprintf("%s would let the project's configuration change the persona's agent %q, which workforce cannot outrank:\n  %s",
		e.Harness, e.Persona, strings.Join(e.Conflicts, "\n  "))
}

// Hint tells how to run anyway.
func (e *ProjectConfigError) Hint() string {
	return "remove them from the project, or run the persona on another harness with --harness"
}

// opencodeHarmless are fields of an agent that change neither what the
// model is told nor what it may do; a project may set them for the
// persona's agent although the persona's agent does not.
var opencodeHarmless = map[string]bool{"description": true, "color": true, "name": true}

// opencodeProjectConflicts returns why opencode, started in dir (sub below
// the project's root), would let the project's configuration change the
// persona's agent id, which workforce defines as agent in the persona
// source (OPENCODE_CONFIG_CONTENT): one line per project file and field
// that the ranking cannot outrank, empty when there are none. opencode
// merges an agent field by field, so
//
//   - a field the persona's agent does not set (temperature, steps, tools,
//     disable, options, a prompt or model the persona leaves to opencode)
//     stays the project's;
//   - a permission both give as an object of patterns is merged pattern by
//     pattern, in the project's order, and the last matching rule wins: the
//     project could reorder the persona's rules;
//   - mode.ID is merged over agent.ID after every source;
//   - a plugin runs in opencode with hooks over its configuration (config),
//     the system prompt and permission questions.
func opencodeProjectConflicts(dir, sub, id string, agent map[string]any) []string {
	if dir == "" {
		return nil
	}
	var out []string
	for _, dir := range upToRoot(dir, sub) {
		files := []string{filepath.Join(dir, "opencode.jsonc"), filepath.Join(dir, "opencode.json")}
		oc := filepath.Join(dir, ".opencode")
		files = append(files, filepath.Join(oc, "opencode.json"), filepath.Join(oc, "opencode.jsonc"))
		for _, f := range files {
			out = append(out, opencodeJSONConflicts(f, id, agent)...)
		}
		for _, d := range []string{"agent", "agents", "mode", "modes"} {
			f := filepath.Join(oc, d, id+".md")
			out = append(out, opencodeMarkdownConflicts(f, id, agent)...)
		}
		for _, d := range []string{"plugin", "plugins"} {
			for _, ext := range []string{"*.ts", "*.js"} {
				found, _ := filepath.Glob(filepath.Join(oc, d, ext))
				for _, f := range found {
					out = append(out, fmt.Sprintf("%s: a plugin runs in opencode with hooks over its configuration and the system prompt", quote.Name(f)))
				}
			}
		}
	}
	return out
}

// opencodeJSONConflicts reads one opencode.json(c) of the project.
func opencodeJSONConflicts(file, id string, agent map[string]any) []string {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	name := quote.Name(file)
	var cfg struct {
		Agent  map[string]json.RawMessage `json:"agent"`
		Mode   map[string]json.RawMessage `json:"mode"`
		Plugin json.RawMessage            `json:"plugin"`
	}
	std, err := hujson.Standardize(data)
	if err == nil {
		err = json.Unmarshal(std, &cfg)
	}
	if err != nil {
		// opencode refuses to start on it; nothing of it applies.
		return nil
	}
	var out []string
	if p := bytes.TrimSpace(cfg.Plugin); len(p) > 0 && !bytes.Equal(p, []byte("[]")) && !bytes.Equal(p, []byte("null")) {
		out = append(out, fmt.Sprintf("%s: plugin: a plugin runs in opencode with hooks over its configuration and the system prompt", name))
	}
	if _, ok := cfg.Mode[id]; ok {
		out = append(out, fmt.Sprintf("%s: mode.%s: opencode merges mode.%s over the agent after every configuration source", name, id, id))
	}
	if raw, ok := cfg.Agent[id]; ok {
		var fields map[string]any
		if json.Unmarshal(raw, &fields) == nil {
			out = append(out, agentConflicts(name, "agent."+id+".", fields, agent)...)
		}
	}
	return out
}

// opencodeMarkdownConflicts reads one .opencode/agent(s) or mode(s) file
// of the project: its front matter are the agent's fields, its body the
// prompt.
func opencodeMarkdownConflicts(file, id string, agent map[string]any) []string {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	doc, err := frontmatter.Parse(data, frontmatter.Options{QuoteColons: true})
	if err != nil || doc.Root == nil {
		// opencode skips a file without front matter, and refuses to
		// start on one it cannot read.
		return nil
	}
	var fields map[string]any
	if err := doc.Root.Decode(&fields); err != nil {
		return nil
	}
	if strings.TrimSpace(string(doc.Body)) != "" {
		fields["prompt"] = string(doc.Body)
	}
	return agentConflicts(quote.Name(file), "", fields, agent)
}

// agentConflicts compares a project's definition of the persona's agent
// with the persona's: the fields opencode would keep from the project.
func agentConflicts(file, prefix string, project, persona map[string]any) []string {
	var out []string
	for _, k := range sortedKeys(project) {
		mine, set := persona[k]
		switch {
		case k == "permission" && set:
			theirs, _ := project[k].(map[string]any)
			ours, _ := mine.(map[string]any)
			for _, p := range sortedKeys(theirs) {
				_, a := theirs[p].(map[string]any)
				_, b := ours[p].(map[string]any)
				if a && b {
					out = append(out, fmt.Sprintf("%s: %spermission.%s: opencode merges its patterns into the persona's in the project's order", file, prefix, p))
				}
			}
		case set, opencodeHarmless[k]:
		default:
			out = append(out, fmt.Sprintf("%s: %s%s: the persona's agent does not set it, so opencode keeps the project's", file, prefix, k))
		}
	}
	return out
}
