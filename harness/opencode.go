package harness

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/lazyre"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/tailscale/hujson"
)

// opencode runs the agent workforce defines for the persona in a session
// config file. Measured on 1.18.33 (make e2e, e2e/mapping_test.go, and
// its bundled source):
//
//   - An agent's permission is a map from a permission name to "allow",
//     "ask" or "deny", or to a map from a pattern to one; opencode flattens
//     it to rules in the order written, after its defaults and the user's
//     own permission, and the last rule matching both the permission and
//     the pattern wins ("*" and "?" are wildcards; a trailing " *" also
//     matches nothing). A tool is not offered at all when the last rule
//     for its permission has the pattern "*" and denies: {"webfetch":
//     "deny", "edit": "deny", "bash": {"*": "allow", "git push *":
//     "deny"}} leaves bash glob grep read skill task todowrite.
//   - edit, write and apply_patch share the permission edit; the patterns
//     of edit and read are paths relative to the worktree, bash's the
//     command, webfetch's the URL, task's the subagent, skill's the skill.
//   - MCP tools are named SERVER_TOOL (characters other than letters,
//     digits, _ and - become _), and that name is their permission.
//   - "ask" in `opencode run` is answered "reject"; in the TUI it asks.
//   - An agent's reasoningEffort reaches the request as reasoning_effort.
//   - A repository's opencode.json and .opencode/ rank above
//     OPENCODE_CONFIG, and OPENCODE_CONFIG_CONTENT above them
//     (OpencodeRanking, opencode_config.go): the persona's agent goes into
//     both, and what of the project's cannot be outranked refuses the run.
const opencodeMeasured = "1.18.33"

// opencodeSpec is what a Claude Code specifier becomes in opencode.
type opencodeSpec int

const (
	ocNoSpec  opencodeSpec = iota // the tool takes no specifier
	ocCommand                     // a command pattern (bash)
	ocPath                        // a path pattern (read, edit)
	ocDomain                      // domain:HOST (webfetch)
	ocNamed                       // a name, as it is (task, skill)
)

// opencodeTool is the opencode permission that gates a Claude Code tool.
type opencodeTool struct {
	perm string
	spec opencodeSpec
	// also names what else the permission gates, when it gates more than
	// the Claude Code tool.
	also string
}

// opencodeTools maps Claude Code's tools to opencode's permissions.
var opencodeTools = map[string]opencodeTool{
	"Bash":         {perm: "bash", spec: ocCommand},
	"Edit":         {perm: "edit", spec: ocPath, also: "write and apply_patch"},
	"Write":        {perm: "edit", also: "edit and apply_patch"},
	"MultiEdit":    {perm: "edit", also: "edit, write and apply_patch"},
	"NotebookEdit": {perm: "edit", also: "edit, write and apply_patch"},
	"Read":         {perm: "read", spec: ocPath},
	"Glob":         {perm: "glob"},
	"Grep":         {perm: "grep"},
	"LS":           {perm: "list"},
	"WebFetch":     {perm: "webfetch", spec: ocDomain},
	"WebSearch":    {perm: "websearch"},
	"Task":         {perm: "task", spec: ocNamed},
	"Agent":        {perm: "task", spec: ocNamed},
	"TodoWrite":    {perm: "todowrite"},
	"Skill":        {perm: "skill", spec: ocNamed},
}

// opencodeModes maps permissions.mode to permission rules, as Claude Code
// defines each mode: default asks before edits, commands and web access;
// acceptEdits edits without asking; plan never edits; dontAsk denies
// whatever would ask; bypassPermissions allows everything. base rules come
// before the persona's allow and deny rules, enforced ones after them.
var opencodeModes = map[string]struct{ base, enforced []ocRule }{
	"default":           {base: ocAsk("edit", "bash", "webfetch", "websearch")},
	"acceptEdits":       {base: append([]ocRule{{"edit", "*", "allow"}}, ocAsk("bash", "webfetch", "websearch")...)},
	"plan":              {base: ocAsk("bash", "webfetch", "websearch"), enforced: []ocRule{{"edit", "*", "deny"}}},
	"dontAsk":           {base: ocEach("deny", "edit", "bash", "webfetch", "websearch")},
	"bypassPermissions": {base: []ocRule{{"*", "*", "allow"}}},
}

func ocAsk(perms ...string) []ocRule { return ocEach("ask", perms...) }

func ocEach(action string, perms ...string) []ocRule {
	out := make([]ocRule, len(perms))
	for i, p := range perms {
		out[i] = ocRule{p, "*", action}
	}
	return out
}

// opencodeProviders name the provider of a model given without one, by
// the start of its name: opencode reads models as PROVIDER/MODEL.
var opencodeProviders = []struct{ prefix, provider string }{
	{"claude-", "anthropic"},
	{"gpt-", "openai"}, {"o1", "openai"}, {"o3", "openai"}, {"o4", "openai"}, {"codex-", "openai"},
	{"gemini-", "google"},
}

// ocRule is one rule of an opencode permission: a permission name (maybe
// a wildcard), a pattern and an action.
type ocRule struct{ perm, pattern, action string }

// ocPermission is an agent's permission as ordered rules. It is written as
// opencode's map: rules grouped by permission in the order each first
// appears, a permission whose one rule has the pattern "*" as a bare
// action. A later rule with the permission and pattern of an earlier one
// replaces it, at its own place.
type ocPermission []ocRule

func (p ocPermission) MarshalJSON() ([]byte, error) {
	// Drop rules a later one with the same permission and pattern replaces.
	var rules []ocRule
	for i, r := range p {
		replaced := false
		for _, later := range p[i+1:] {
			if later.perm == r.perm && later.pattern == r.pattern {
				replaced = true
				break
			}
		}
		if !replaced {
			rules = append(rules, r)
		}
	}
	var order []string
	groups := map[string][]ocRule{}
	for _, r := range rules {
		if _, ok := groups[r.perm]; !ok {
			order = append(order, r.perm)
		}
		groups[r.perm] = append(groups[r.perm], r)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, perm := range order {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(perm)
		b.Write(k)
		b.WriteByte(':')
		g := groups[perm]
		if len(g) == 1 && g[0].pattern == "*" {
			v, _ := json.Marshal(g[0].action)
			b.Write(v)
			continue
		}
		b.WriteByte('{')
		for j, r := range g {
			if j > 0 {
				b.WriteByte(',')
			}
			pk, _ := json.Marshal(r.pattern)
			pv, _ := json.Marshal(r.action)
			b.Write(pk)
			b.WriteByte(':')
			b.Write(pv)
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// describe names a rule as a path into the agent's entry of the session
// config: permission.bash["git push *"] = "deny".
func (r ocRule) describe() string {
	key := "permission." + r.perm
	if !plainKey().MatchString(r.perm) {
		key = fmt.Sprintf("permission[%q]", r.perm)
	}
	if r.pattern == "*" {
		return fmt.Sprintf("%s = %q", key, r.action)
	}
	return fmt.Sprintf("%s[%q] = %q", key, r.pattern, r.action)
}

var plainKey = lazyre.New(`^[a-z_]+$`)

// ocNameChars are what opencode replaces with _ in an MCP tool's name.
var ocNameChars = lazyre.New(`[^a-zA-Z0-9_-]`)

// ocName is a name as opencode writes it in an MCP tool's name.
func ocName(s string) string { return ocNameChars().ReplaceAllString(s, "_") }

// opencodeRules maps one persona rule to opencode permission rules, or
// says why it cannot.
func opencodeRules(e ruleEntry, action string, allow []ruleEntry, o Options) ([]ocRule, string, string) {
	r := e.rule
	if server, tool, ok := r.MCP(); ok {
		perm := ocName(server) + "_*"
		if tool != "" && tool != "*" {
			perm = ocName(server) + "_" + ocName(tool)
		}
		return []ocRule{{perm, "*", action}}, "", ""
	}
	t, ok := opencodeTools[r.Tool]
	if !ok {
		return nil, "", fmt.Sprintf("opencode has no counterpart of Claude Code's %s tool", r.Tool)
	}
	if r.Specifier == "" {
		note := ""
		if t.also != "" {
			if action == "allow" && editTools[r.Tool] && !editPair(allow) {
				return nil, "", fmt.Sprintf("opencode's one edit permission also lets %s run without asking; allow Edit and Write together", t.also)
			}
			if action == "deny" {
				note = " (opencode's edit permission also covers " + t.also + ")"
			}
		}
		return []ocRule{{t.perm, "*", action}}, note, ""
	}
	var patterns []string
	var err error
	switch t.spec {
	case ocCommand:
		var p string
		p, err = opencodeCommand(r.Specifier)
		patterns = []string{p}
	case ocPath:
		patterns, err = opencodePath(r.Specifier, o)
	case ocDomain:
		patterns, err = opencodeDomain(r.Specifier)
	case ocNamed:
		if strings.ContainsAny(r.Specifier, "*?") {
			err = errors.New("opencode would read * and ? in it as wildcards")
		}
		patterns = []string{r.Specifier}
	default:
		err = fmt.Errorf("opencode's %s permission takes no pattern", t.perm)
	}
	if err != nil {
		return nil, "", err.Error()
	}
	var rules []ocRule
	for _, p := range patterns {
		rules = append(rules, ocRule{t.perm, p, action})
	}
	return rules, "", ""
}

// opencodeCommand turns a Claude Code Bash specifier into an opencode
// bash pattern: a trailing ":*" (a prefix) becomes " *", which opencode
// also matches when nothing follows; "*" is a wildcard in both.
func opencodeCommand(spec string) (string, error) {
	if strings.Contains(spec, "?") {
		return "", errors.New("opencode would read ? in a command pattern as a wildcard")
	}
	if p, ok := strings.CutSuffix(spec, ":*"); ok {
		return p + " *", nil
	}
	return spec, nil
}

// opencodePath turns a Claude Code path specifier into opencode patterns,
// which are paths relative to the worktree (the project root), where *
// matches across directories. ./x and x are relative to the working
// directory, /x to the project root. ** may be a whole segment; other
// wildcards are refused, since opencode's * would match more than a
// gitignore-style * does. When opencode's worktree is / (no git), it
// writes the path from /, so the pattern is also given that way.
func opencodePath(spec string, o Options) ([]string, error) {
	var rel string
	switch {
	case strings.HasPrefix(spec, "//"), strings.HasPrefix(spec, "~"):
		return nil, errors.New("opencode's read and edit patterns are relative to the project; the path is outside it")
	case strings.HasPrefix(spec, "/"):
		rel = spec[1:]
	default:
		rel = path.Join(filepath.ToSlash(o.Subdir), strings.TrimPrefix(spec, "./"))
	}
	if strings.ContainsAny(rel, "?[]\\") {
		return nil, errors.New("opencode's path patterns have no ?, [] or escapes")
	}
	segs := strings.Split(strings.Trim(rel, "/"), "/")
	doubles := 0
	for _, s := range segs {
		switch {
		case s == "..":
			return nil, errors.New("the path leaves the project")
		case s == "**":
			doubles++
		case strings.Contains(s, "*"):
			return nil, errors.New("opencode's * also matches /; only ** as a whole path segment maps exactly")
		}
	}
	if doubles > 1 {
		return nil, errors.New("opencode's patterns take one ** at most")
	}
	var pats []string
	for i, s := range segs {
		if s != "**" {
			continue
		}
		before, after := strings.Join(segs[:i], "/"), strings.Join(segs[i+1:], "/")
		switch {
		case after == "": // a/** is everything below a
			pats = []string{strings.TrimPrefix(before+"/*", "/")}
		case before == "": // **/b is b at any depth
			pats = []string{after, "*/" + after}
		default:
			pats = []string{before + "/" + after, before + "/*/" + after}
		}
	}
	if pats == nil {
		pats = []string{strings.Join(segs, "/")}
	}
	if root := strings.TrimPrefix(filepath.ToSlash(o.Root), "/"); root != "" {
		for _, p := range pats {
			pats = append(pats, root+"/"+p)
		}
	}
	return pats, nil
}

var hostName = lazyre.New(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$`)

// opencodeDomain turns WebFetch(domain:HOST) into the URL patterns of the
// host, over http and https.
func opencodeDomain(spec string) ([]string, error) {
	host, ok := strings.CutPrefix(spec, "domain:")
	if !ok || !hostName().MatchString(host) {
		return nil, errors.New("opencode's webfetch patterns match URLs; only domain:HOST, a host without wildcards, maps exactly")
	}
	var out []string
	for _, scheme := range []string{"https://", "http://"} {
		out = append(out, scheme+host, scheme+host+"/*")
	}
	return out, nil
}

func planOpencode(inv *Invocation, r *persona.Resolved, o Options, m *Mapping, lookup func(string) string) error {
	if o.ConfigDir == "" {
		return errors.New("opencode needs a session configuration directory")
	}
	// The user's OPENCODE_CONFIG is the base, kept as written (opencode
	// reads the order of permission rules), with the persona's agent added.
	cfg := map[string]json.RawMessage{}
	if user := envLookup(o.Env)("OPENCODE_CONFIG"); user != "" {
		data, err := os.ReadFile(user)
		if err != nil {
			return fmt.Errorf("cannot read your OPENCODE_CONFIG %s to merge the persona's agent into it: %w", user, err)
		}
		if err := json.Unmarshal(data, &cfg); err != nil {
			return fmt.Errorf("cannot merge the persona's agent into your OPENCODE_CONFIG %s: it is not plain JSON: %v", user, err)
		}
	}
	if _, ok := cfg["$schema"]; !ok {
		cfg["$schema"] = json.RawMessage(`"https://opencode.ai/config.json"`)
	}
	agent := map[string]any{"mode": "primary"}
	model := r.Model
	if !strings.Contains(model, "/") {
		for _, p := range opencodeProviders {
			if strings.HasPrefix(model, p.prefix) {
				model = p.provider + "/" + model
				break
			}
		}
	}
	if model == persona.ModelInherit {
		m.apply(FieldModel, r.Model, "no agent model: opencode's own default model")
	} else {
		agent["model"] = model
		how := fmt.Sprintf("agent model %q", model)
		if model != r.Model {
			how += " (opencode reads models as provider/model)"
		}
		m.apply(FieldModel, r.Model, how)
	}
	if r.SystemPrompt != "" {
		agent["prompt"] = r.SystemPrompt
	}

	var perm ocPermission
	var enforced []ocRule
	if mode := r.Permissions.Mode; mode != "" {
		if mm, ok := opencodeModes[mode]; ok {
			perm = append(perm, mm.base...)
			enforced = mm.enforced
			var parts []string
			for _, x := range append(append([]ocRule(nil), mm.base...), mm.enforced...) {
				parts = append(parts, x.describe())
			}
			m.apply(FieldMode, mode, strings.Join(parts, ", "))
		} else {
			m.refuse(FieldMode, mode, "opencode has no counterpart of this permission mode")
		}
	}
	allow, deny := parseRules(r.Permissions)
	allow, deny = refuseBadRules(m, allow), refuseBadRules(m, deny)
	for _, list := range []struct {
		action  string
		entries []ruleEntry
	}{{"allow", allow}, {"deny", deny}} {
		for _, e := range list.entries {
			rules, note, why := opencodeRules(e, list.action, allow, o)
			if why != "" {
				m.refuse(e.field, e.raw, why)
				continue
			}
			perm = append(perm, rules...)
			var parts []string
			for _, x := range rules {
				parts = append(parts, x.describe())
			}
			m.apply(e.field, e.raw, strings.Join(parts, ", ")+note)
		}
	}
	perm = append(perm, enforced...)
	if len(perm) > 0 {
		agent["permission"] = perm
	}
	inv.opencodeAsks = opencodeAsks(perm, envLookup(o.Env))
	if v := r.HarnessSettings.Reasoning; v != "" {
		agent["reasoningEffort"] = v
		m.apply(FieldReasoning, v, fmt.Sprintf("agent reasoningEffort %q", v))
	}
	agents := map[string]json.RawMessage{}
	if raw, ok := cfg["agent"]; ok {
		if err := json.Unmarshal(raw, &agents); err != nil {
			return fmt.Errorf("cannot merge the persona's agent into your OPENCODE_CONFIG: its agent is not an object: %v", err)
		}
	}
	b, err := json.Marshal(agent)
	if err != nil {
		return err
	}
	agents[r.ID] = b
	// The project's configuration ranks above OPENCODE_CONFIG: the agent
	// also goes where it ranks above the project's (OpencodeRanking), and
	// what of the project's it cannot outrank refuses the run.
	var mine map[string]any
	if err := json.Unmarshal(b, &mine); err != nil {
		return err
	}
	// The project's files as the user's directory holds them, and as the
	// tree the harness starts in holds them where it is already made (a
	// resumed or reused session's, which the agent wrote).
	c := opencodeProjectConflicts(o.ProjectDir, o.Subdir, r.ID, mine)
	if root := cmp.Or(o.AgentRoot, o.Root); root != "" {
		if tree := filepath.Join(root, o.Subdir); tree != o.ProjectDir {
			c = append(c, opencodeProjectConflicts(tree, o.Subdir, r.ID, mine)...)
		}
	}
	if len(c) > 0 {
		return &ProjectConfigError{Harness: "opencode", Persona: r.ID, Conflicts: c}
	}
	contentMCP := map[string]json.RawMessage{}
	if cfg["agent"], err = json.Marshal(agents); err != nil {
		return err
	}
	if len(r.MCPServers) > 0 {
		mcp := map[string]json.RawMessage{}
		if raw, ok := cfg["mcp"]; ok {
			if err := json.Unmarshal(raw, &mcp); err != nil {
				return fmt.Errorf("cannot merge the persona's MCP servers into your OPENCODE_CONFIG: its mcp is not an object: %v", err)
			}
		}
		servers := expandMCP(r.MCPServers, lookup)
		for _, name := range mcpNames(servers) {
			s := servers[name]
			var v map[string]any
			if s.Type == "stdio" {
				v = map[string]any{"type": "local", "command": append([]string{s.Command}, s.Args...)}
				if len(s.Env) > 0 {
					v["environment"] = s.Env
				}
			} else {
				v = map[string]any{"type": "remote", "url": s.URL}
				if len(s.Headers) > 0 {
					v["headers"] = s.Headers
				}
			}
			if mcp[name], err = json.Marshal(v); err != nil {
				return err
			}
			contentMCP[name] = mcp[name]
			m.apply(FieldMCP, name, fmt.Sprintf("mcp.%s, type %s", name, v["type"]))
		}
		if cfg["mcp"], err = json.Marshal(mcp); err != nil {
			return err
		}
	}
	if len(o.OpencodeKeys) > 0 {
		// Your OPENCODE_CONFIG's keys: the placeholders.
		raw, err := opencodeProviderKeys(cfg["provider"], o.OpencodeKeys, false)
		if err != nil {
			return fmt.Errorf("cannot put the brokered keys' placeholders into your OPENCODE_CONFIG's providers: %v", err)
		}
		if raw != nil {
			cfg["provider"] = raw
		}
	}
	b, err = json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	p := filepath.Join(o.ConfigDir, "opencode.json")
	inv.Files[p] = string(b) + "\n"
	inv.SetEnv = append(inv.SetEnv, "OPENCODE_CONFIG="+p)
	user := envLookup(o.Env)("OPENCODE_CONFIG_CONTENT")
	if v, ok := r.Env["OPENCODE_CONFIG_CONTENT"]; ok {
		user = os.Expand(v, lookup) // the persona's own, as its env sets it
	}
	content, err := opencodeContent(user, r.ID, agents[r.ID], contentMCP, o.BrokerURLs, o.OpencodeKeys)
	if err != nil {
		return err
	}
	inv.SetEnv = append(inv.SetEnv, "OPENCODE_CONFIG_CONTENT="+content)
	inv.Args = []string{"--agent", r.ID}
	return nil
}

// OpencodeAgent returns the opencode agent r becomes, as run writes it
// into the session's config (without its mode and prompt): each key's
// value as JSON, the permission rules in the order opencode evaluates
// them. Values opencode cannot express are left out; the mapping says
// which. r.Harness must be opencode.
func OpencodeAgent(r *persona.Resolved) (map[string]json.RawMessage, *Mapping, error) {
	const dir = "/config"
	inv, err := Plan(r, Options{ConfigDir: dir, AllowUnmapped: true})
	if err != nil {
		return nil, nil, err
	}
	var cfg struct {
		Agent map[string]map[string]json.RawMessage `json:"agent"`
	}
	if err := json.Unmarshal([]byte(inv.Files[filepath.Join(dir, "opencode.json")]), &cfg); err != nil {
		return nil, nil, err
	}
	agent := cfg.Agent[r.ID]
	delete(agent, "mode")
	delete(agent, "prompt")
	return agent, inv.Mapping, nil
}

// opencodeAsks returns the permissions that would ask in the persona's
// agent (its rules perm) or in the user's own opencode configuration
// (the permission of $OPENCODE_CONFIG and of opencode.json / config.json
// in the user's configuration directory), sorted: what `opencode run`,
// which cannot ask, rejects. opencode's own defaults (measured on
// 1.18.33: a directory outside the project, a .env file, a repeated tool
// call) ask too; docs/harnesses.md says so once rather than every run.
func opencodeAsks(perm ocPermission, get func(string) string) []string {
	var asks []string
	for _, r := range perm {
		if r.action == "ask" {
			asks = append(asks, r.perm)
		}
	}
	for _, path := range opencodeUserConfigs(get) {
		data, err := readOptional(path)
		if err != nil || data == nil {
			continue
		}
		std, err := hujson.Standardize(data)
		if err != nil {
			continue
		}
		var c struct {
			Permission map[string]any `json:"permission"`
		}
		if json.Unmarshal(std, &c) != nil {
			continue
		}
		for name, v := range c.Permission {
			if asksIn(v) {
				asks = append(asks, name)
			}
		}
	}
	slices.Sort(asks)
	return slices.Compact(asks)
}

// asksIn reports whether an opencode permission value, an action or a
// map from a pattern to one, holds "ask".
func asksIn(v any) bool {
	switch v := v.(type) {
	case string:
		return v == "ask"
	case map[string]any:
		for _, x := range v {
			if asksIn(x) {
				return true
			}
		}
	}
	return false
}
