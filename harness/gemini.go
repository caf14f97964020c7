package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/persona"
)

// Gemini CLI (@google/gemini-cli) takes flags (-m, --approval-mode,
// --policy, --skip-trust, --sandbox) and everything else from its
// settings.json, which it reads from its home only ($GEMINI_CLI_HOME, else
// the user's home: discover/gemini.go). workforce writes no file of the
// user's: the settings a persona needs (its MCP servers, its effort) and
// its system prompt go into the run's per-session home (State,
// Invocation.StateFiles), seeded from the user's, so a run without one
// (--install-in-repo) refuses them. Measured on 0.61.0 with the scripted
// model of make e2e (e2e/gemini_test.go):
//
//   - -m MODEL names the model (gemini resolves some names: -m
//     gemini-3-pro-preview requests gemini-3.1-pro-preview); without -m
//     its router first asks a small model to score the task.
//   - The system prompt: <home>/.gemini/GEMINI.md (and every name of
//     context.fileName there) is appended to gemini's own system prompt
//     (GEMINI_SYSTEM_MD=FILE would replace it whole); the persona's
//     prompt goes into the session home's GEMINI.md after the user's own
//     text, as claude's --append-system-prompt adds it.
//   - --approval-mode default|auto_edit|yolo|plan. In a headless run
//     (-p) "default" does not offer the tools that would ask (replace,
//     write_file, run_shell_command, web_fetch, write_todos,
//     activate_skill, the background process tools); a call to one fails
//     with tool_not_registered, and gemini exits 0.
//   - --policy FILE.toml adds policy rules ([[rule]] toolName, mcpName,
//     commandPrefix, commandRegex, argsPattern, decision allow, deny or
//     ask_user, priority 0-999 in the user tier, 4.000-4.999, above the
//     built-in rules, yolo's allow-all among them, 1.998): a deny rule on
//     a tool without arguments removes the tool from those offered, in
//     every approval mode. An MCP tool is denied by its whole name,
//     mcp_SERVER_TOOL, a server by toolName "*" and mcpName. Given --policy,
//     gemini no longer reads the user's policies directory
//     (<home>/.gemini/policies), so it is given as a second --policy; and
//     it splits --policy values at commas (a path holding one is
//     refused).
//   - Effort: no flag; settings modelConfigs.customOverrides, matched on a
//     model alias: thinkingConfig.thinkingLevel for the Gemini 3 models
//     (alias chat-base-3, HIGH by default), thinkingBudget for the 2.5
//     models (chat-base-2.5, 8192 by default). An override on the name
//     asked for does not match a name gemini resolves to another.
//   - MCP servers: settings mcpServers (command/args/env for stdio,
//     httpUrl for streamable HTTP, url for SSE); the tools are named
//     mcp_SERVER_TOOL, and a policy rule takes mcpName and toolName.
//   - Trust: a headless run in an untrusted directory exits 55. workforce
//     decides as gemini would in the user's real directory
//     (discover.LoadGeminiConfig): trusted, it sets
//     GEMINI_CLI_TRUST_WORKSPACE=true, which also applies the project's
//     .gemini/settings.json; otherwise --skip-trust, which runs without
//     them (the project's GEMINI.md files and skills load either way).
//     --skip-trust trusts the workspace for gemini's .env loading, which
//     then loads a project .env whole (an untrusted folder gets only its
//     API key variables): an untrusted run sets advanced.ignoreLocalEnv,
//     and a .gemini/.env of the project, which gemini loads whatever
//     that setting says, refuses the run.
//   - Its own sandbox: --sandbox means a docker or podman container, and
//     security.toolSandboxing runs each tool under bubblewrap; neither
//     can start inside workforce's write sandbox, so a confined run
//     passes --sandbox=false and turns toolSandboxing off.
//   - gemini --version writes into its home (projects.json.*.tmp files it
//     leaves behind), so workforce asks it with GEMINI_CLI_HOME a
//     temporary directory (version.go).
//   - --session-id UUID fixes the id of a new conversation, interactive
//     or -p; -p TASK --resume UUID continues one in the same working
//     directory (sessions are kept per directory under
//     <home>/.gemini/tmp/; another directory exits 42).
const geminiMeasured = "0.61.0"

// geminiHomeRel is where the per-session gemini home is, relative to
// the state directory; GEMINI_CLI_HOME names it.
const geminiHomeRel = "gemini"

// geminiModes maps permissions.mode to --approval-mode; dontAsk is
// default with deny rules for what would ask (geminiAsking).
var geminiModes = map[string]string{
	"default": "default", "acceptEdits": "auto_edit", "plan": "plan",
	"dontAsk": "default", "bypassPermissions": "yolo",
}

// geminiAsking are the tools gemini 0.61.0 asks about in its default
// approval mode (those a headless run does not offer), and every MCP
// tool.
var geminiAsking = []string{"replace", "write_file", "run_shell_command", "web_fetch", "write_todos",
	"activate_skill", "list_background_processes", "read_background_output"}

// geminiTool is what a Claude Code tool is in gemini: its tools (the
// first is the one a specifier applies to), or why it has none.
type geminiTool struct {
	tools []string
	// spec says what a specifier of the rule becomes: "command" (a
	// shell command pattern), "" (none taken).
	spec string
	// none, when set, says why the rule needs nothing on gemini.
	none string
}

// geminiTools maps Claude Code's tools to gemini's.
var geminiTools = map[string]geminiTool{
	"Bash":         {tools: []string{"run_shell_command"}, spec: "command"},
	"Edit":         {tools: []string{"replace"}},
	"MultiEdit":    {tools: []string{"replace"}},
	"Write":        {tools: []string{"write_file"}},
	"NotebookEdit": {none: "gemini has no notebook tool"},
	"Read":         {tools: []string{"read_file"}},
	"Glob":         {tools: []string{"glob"}},
	"Grep":         {tools: []string{"grep_search"}},
	"LS":           {tools: []string{"list_directory"}},
	"WebFetch":     {tools: []string{"web_fetch"}},
	"WebSearch":    {tools: []string{"google_web_search"}},
	"Task":         {tools: []string{"invoke_agent"}},
	"Agent":        {tools: []string{"invoke_agent"}},
	"TodoWrite":    {tools: []string{"write_todos"}},
	"Skill":        {tools: []string{"activate_skill"}},
}

// Priorities of workforce's policy rules (the user tier): what the mode
// denies, then the allow rules, then the deny rules, so that a deny wins
// over an allow as in Claude Code.
const (
	geminiModePriority  = 300
	geminiAllowPriority = 600
	geminiDenyPriority  = 999
)

// geminiRule is one [[rule]] of the policy file workforce writes.
type geminiRule struct {
	toolName      string
	mcpName       string
	commandPrefix string
	commandRegex  string
	decision      string
	priority      int
	denyMessage   string
}

func (r geminiRule) toml() string {
	var b strings.Builder
	b.WriteString("[[rule]]\n")
	b.WriteString("toolName = " + tomlString(r.toolName) + "\n")
	if r.mcpName != "" {
		b.WriteString("mcpName = " + tomlString(r.mcpName) + "\n")
	}
	if r.commandPrefix != "" {
		b.WriteString("commandPrefix = " + tomlString(r.commandPrefix) + "\n")
	}
	if r.commandRegex != "" {
		b.WriteString("commandRegex = " + tomlString(r.commandRegex) + "\n")
	}
	b.WriteString("decision = " + tomlString(r.decision) + "\n")
	fmt.Fprintf(&b, "priority = %d\n", r.priority)
	if r.denyMessage != "" {
		b.WriteString("denyMessage = " + tomlString(r.denyMessage) + "\n")
	}
	return b.String()
}

// describe names the rule for the mapping: policy deny write_file.
func (r geminiRule) describe() string {
	s := "policy " + r.decision + " "
	switch {
	case r.mcpName != "" && r.toolName == "*":
		s += "mcpName " + r.mcpName
	case r.mcpName != "":
		s += "mcpName " + r.mcpName + " toolName " + r.toolName
	default:
		s += r.toolName
	}
	if r.commandPrefix != "" {
		s += fmt.Sprintf(" commandPrefix %q", r.commandPrefix)
	}
	if r.commandRegex != "" {
		s += fmt.Sprintf(" commandRegex %q", r.commandRegex)
	}
	return s
}

// geminiEfforts are the thinking settings of each reasoning effort: a
// level for the Gemini 3 models, a budget for the 2.5 ones (8192 is
// gemini's own default).
var geminiEfforts = map[string]struct {
	level  string
	budget int
}{
	"low": {"LOW", 1024}, "medium": {"MEDIUM", 8192}, "high": {"HIGH", 24576},
}

// geminiHome returns the per-session gemini home the state variables set
// (GEMINI_CLI_HOME), "" when the run has none.
func geminiHome(state []string) string {
	for _, kv := range state {
		if k, v, ok := strings.Cut(kv, "="); ok && k == "GEMINI_CLI_HOME" {
			return v
		}
	}
	return ""
}

// geminiNoHome is why a value that goes into gemini's settings is refused
// without a per-session home.
const geminiNoHome = "gemini reads it from its settings.json only, and this run has no per-session gemini home to write it into (workforce never writes yours; --install-in-repo runs without one)"

func planGemini(inv *Invocation, r *persona.Resolved, o Options, m *Mapping, lookup func(string) string) error {
	home := geminiHome(o.State)
	settings, err := geminiUserSettings(o.Env)
	if err != nil {
		return err
	}
	changed := false
	inv.Args = []string{}
	model := r.Model
	switch {
	case model == persona.ModelInherit:
		m.apply(FieldModel, r.Model, "no -m: gemini's own default model (its router picks one per task)")
	case strings.HasPrefix(model, "google/"):
		model = strings.TrimPrefix(model, "google/")
		inv.Args = append(inv.Args, "-m", model)
		m.apply(FieldModel, r.Model, "-m "+model+" (gemini names models without their provider)")
	case strings.Contains(model, "/"):
		m.refuse(FieldModel, r.Model, "gemini runs Gemini models only (the Gemini API or Vertex AI), named without a provider")
	default:
		inv.Args = append(inv.Args, "-m", model)
		m.apply(FieldModel, r.Model, "-m "+model)
	}

	// The system prompt, after the user's own global instructions.
	if r.SystemPrompt != "" {
		if home == "" {
			m.refuse(FieldSystemPrompt, "set", geminiNoHome)
		} else {
			text := r.SystemPrompt
			if user := geminiUserGlobal(o.Env); user != "" {
				text = user + "\n\n" + text
			}
			inv.StateFiles[filepath.Join(geminiHomeRel, ".gemini", "GEMINI.md")] = text
		}
	}

	// Permissions: the approval mode, then policy rules.
	var rules []geminiRule
	if mode := r.Permissions.Mode; mode != "" {
		am, ok := geminiModes[mode]
		userMode := geminiUserApproval(append(slices.Clone(o.Extra), o.oneShotExtra...))
		switch {
		case !ok:
			m.refuse(FieldMode, mode, "gemini has no counterpart of this permission mode")
		case userMode != "":
			// gemini takes one approval mode: a second --approval-mode
			// joins the two ("auto_edit,auto_edit", refused), and --yolo
			// beside it is an error. The arguments after -- are the user's
			// choice for this run; the persona's policy rules stay.
			m.apply(FieldMode, mode, "not passed: the harness arguments choose the approval mode ("+userMode+")")
		case mode == "dontAsk":
			inv.Args = append(inv.Args, "--approval-mode", am)
			for _, t := range geminiAsking {
				rules = append(rules, geminiRule{toolName: t, decision: "deny", priority: geminiModePriority, denyMessage: "workforce: the persona's permissions.mode dontAsk denies what would ask"})
			}
			rules = append(rules, geminiRule{toolName: "*", mcpName: "*", decision: "deny", priority: geminiModePriority, denyMessage: "workforce: the persona's permissions.mode dontAsk denies what would ask"})
			m.apply(FieldMode, mode, "--approval-mode default and policy deny of the tools that would ask ("+strings.Join(geminiAsking, ", ")+", MCP tools)")
		default:
			inv.Args = append(inv.Args, "--approval-mode", am)
			how := "--approval-mode " + am
			if mode == "default" {
				how += " (a one-shot run does not offer the tools that would ask)"
			}
			m.apply(FieldMode, mode, how)
		}
	}
	allow, deny := parseRules(r.Permissions)
	allow, deny = refuseBadRules(m, allow), refuseBadRules(m, deny)
	for _, list := range []struct {
		decision string
		priority int
		entries  []ruleEntry
	}{{"allow", geminiAllowPriority, allow}, {"deny", geminiDenyPriority, deny}} {
		for _, e := range list.entries {
			rs, how, why := geminiRules(e, list.decision, list.priority)
			if why != "" {
				m.refuse(e.field, e.raw, why)
				continue
			}
			rules = append(rules, rs...)
			m.apply(e.field, e.raw, how)
		}
	}
	if len(rules) > 0 {
		var b strings.Builder
		b.WriteString("# workforce: the permissions of persona " + r.ID + "\n")
		for _, x := range rules {
			b.WriteString("\n" + x.toml())
		}
		p := filepath.Join(o.ConfigDir, "gemini-policy.toml")
		if strings.Contains(p, ",") {
			// gemini splits --policy at commas.
			return fmt.Errorf("gemini cannot read a policy file whose path holds a comma (%s): set %s to a directory without one", p, "AGENT_WORKFORCE_HOME")
		}
		inv.Files[p] = b.String()
		inv.Args = append(inv.Args, "--policy", p)
		// --policy replaces the user's policies directory, which gemini
		// reads otherwise: it is given again (the session home's copy).
		if user := geminiPoliciesDir(o.Env, home); user != "" && !strings.Contains(user, ",") {
			inv.Args = append(inv.Args, "--policy", user)
		}
	}

	// Effort.
	if v := r.HarnessSettings.Reasoning; v != "" {
		e, ok := geminiEfforts[v]
		switch {
		case !ok:
			m.refuse(FieldReasoning, v, "gemini's thinking takes low, medium or high")
		case home == "":
			m.refuse(FieldReasoning, v, geminiNoHome)
		default:
			overrides, _ := settingList(settings, "modelConfigs", "customOverrides")
			overrides = append(overrides,
				map[string]any{"match": map[string]any{"model": "chat-base-3"}, "modelConfig": map[string]any{
					"generateContentConfig": map[string]any{"thinkingConfig": map[string]any{"thinkingLevel": e.level}}}},
				map[string]any{"match": map[string]any{"model": "chat-base-2.5"}, "modelConfig": map[string]any{
					"generateContentConfig": map[string]any{"thinkingConfig": map[string]any{"thinkingBudget": e.budget}}}},
			)
			setSetting(settings, overrides, "modelConfigs", "customOverrides")
			changed = true
			m.apply(FieldReasoning, v, fmt.Sprintf("settings modelConfigs.customOverrides: thinkingLevel %s for the Gemini 3 models, thinkingBudget %d for the 2.5 ones", e.level, e.budget))
		}
	}

	// MCP servers, beside the user's own.
	if len(r.MCPServers) > 0 {
		servers := expandMCP(r.MCPServers, lookup)
		all, _ := settingAt(settings, "mcpServers").(map[string]any)
		if all == nil {
			all = map[string]any{}
		}
		for _, n := range mcpNames(servers) {
			if home == "" {
				m.refuse(FieldMCP, n, geminiNoHome)
				continue
			}
			s := servers[n]
			v := map[string]any{}
			how := "settings mcpServers." + n
			switch s.Type {
			case "stdio":
				v["command"] = s.Command
				if len(s.Args) > 0 {
					v["args"] = s.Args
				}
				if len(s.Env) > 0 {
					v["env"] = s.Env
				}
				how += " (command, stdio)"
			case "sse":
				v["url"] = s.URL
				how += " (url, SSE)"
			default:
				v["httpUrl"] = s.URL
				how += " (httpUrl, streamable HTTP)"
			}
			if len(s.Headers) > 0 {
				v["headers"] = s.Headers
			}
			all[n] = v
			changed = true
			m.apply(FieldMCP, n, how)
		}
		setSetting(settings, all, "mcpServers")
	}

	// Trust, decided as gemini would in the user's real directory.
	cfg := discover.LoadGeminiConfig(envLookup(o.Env), o.ProjectDir)
	if o.ProjectDir != "" && cfg.Trusted != nil && *cfg.Trusted {
		// As in the user's directory: its .gemini/settings.json applies.
		inv.SetEnv = append(inv.SetEnv, "GEMINI_CLI_TRUST_WORKSPACE=true")
	} else {
		if envs := geminiProjectEnvs(o.ProjectDir, o.Subdir); len(envs) > 0 {
			// gemini loads <dir>/.gemini/.env in a workspace --skip-trust
			// trusts, whatever advanced.ignoreLocalEnv says (measured).
			return fmt.Errorf("gemini would load %s though you do not trust this project in your gemini settings (its variables could send your login and the code elsewhere): trust the project in gemini (trustedFolders.json) or remove the file", strings.Join(envs, ", "))
		}
		inv.Args = append(inv.Args, "--skip-trust")
		note := "gemini: you do not trust this project in your gemini settings: it runs with --skip-trust, without the project's .gemini/settings.json"
		if home != "" {
			// --skip-trust trusts the workspace for gemini's .env loading
			// (measured: a project .env's GEMINI_SYSTEM_MD applied), which
			// an untrusted project must not choose (its
			// GOOGLE_GEMINI_BASE_URL would receive your key and the code).
			if v, _ := settingAt(settings, "advanced", "ignoreLocalEnv").(bool); !v {
				setSetting(settings, true, "advanced", "ignoreLocalEnv")
				changed = true
			}
			note += " and its .env files (settings advanced.ignoreLocalEnv)"
		} else {
			note += "; its .env files load (no per-session gemini home to turn them off in)"
		}
		inv.Notes = append(inv.Notes, note)
	}

	if o.SessionID != "" {
		inv.Args = append(inv.Args, "--session-id", o.SessionID)
	}
	if o.Confined {
		inv.Args = append(inv.Args, "--sandbox=false")
		inv.SetEnv = append(inv.SetEnv, "GEMINI_SANDBOX=false")
		how := "--sandbox=false and GEMINI_SANDBOX=false: gemini's own sandbox (a docker or podman container) cannot start inside Landlock; workforce's lets it write the tree and the session's tmp"
		if home != "" {
			setSetting(settings, false, "security", "toolSandboxing")
			changed = true
			how += "; settings security.toolSandboxing false (bubblewrap per tool); settings privacy.usageStatisticsEnabled false (no usage statistics)"
		}
		m.apply(FieldWriteSandbox, "on", how)
	}

	if home != "" {
		// Usage statistics off unless the user turned them on; confined,
		// off (play.googleapis.com: networkSwitches).
		if v, ok := settingAt(settings, "privacy", "usageStatisticsEnabled").(bool); !ok || !v || o.Confined {
			setSetting(settings, false, "privacy", "usageStatisticsEnabled")
			changed = true
		}
		if changed {
			b, err := json.MarshalIndent(settings, "", "  ")
			if err != nil {
				return err
			}
			inv.StateFiles[filepath.Join(geminiHomeRel, ".gemini", "settings.json")] = string(b) + "\n"
		}
	}
	return nil
}

// geminiRules maps one persona rule to gemini policy rules, and says how,
// or why it cannot.
func geminiRules(e ruleEntry, decision string, priority int) ([]geminiRule, string, string) {
	r := e.rule
	msg := ""
	if decision == "deny" {
		msg = "workforce: the persona denies " + e.raw
	}
	if server, tool, ok := r.MCP(); ok {
		x := geminiRule{toolName: "*", mcpName: server, decision: decision, priority: priority, denyMessage: msg}
		if tool != "" && tool != "*" {
			// By its whole name, as gemini offers it.
			x = geminiRule{toolName: "mcp_" + server + "_" + tool, decision: decision, priority: priority, denyMessage: msg}
		}
		return []geminiRule{x}, x.describe(), ""
	}
	t, ok := geminiTools[r.Tool]
	if !ok {
		return nil, "", fmt.Sprintf("gemini has no counterpart of Claude Code's %s tool", r.Tool)
	}
	if t.none != "" {
		return nil, "nothing: " + t.none, ""
	}
	var rules []geminiRule
	if r.Specifier == "" {
		tools := t.tools
		if decision == "deny" && r.Tool == "Bash" {
			// The background process tools read what the shell started.
			tools = []string{"run_shell_command", "list_background_processes", "read_background_output"}
		}
		var names []string
		for _, name := range tools {
			x := geminiRule{toolName: name, decision: decision, priority: priority, denyMessage: msg}
			rules = append(rules, x)
			names = append(names, x.describe())
		}
		how := strings.Join(names, ", ")
		if decision == "deny" {
			how += " (the tool is not offered)"
		}
		return rules, how, ""
	}
	if t.spec != "command" {
		return nil, "", fmt.Sprintf("gemini's policy matches %s's arguments as JSON text, which cannot match %q exactly", t.tools[0], r.Specifier)
	}
	x := geminiRule{toolName: t.tools[0], decision: decision, priority: priority, denyMessage: msg}
	spec := r.Specifier
	prefix, isPrefix := strings.CutSuffix(spec, ":*")
	if !isPrefix {
		prefix, isPrefix = strings.CutSuffix(spec, " *")
	}
	switch {
	case isPrefix && !strings.ContainsAny(prefix, "*?"):
		x.commandPrefix = prefix
	case !isPrefix && !strings.ContainsAny(spec, "*?"):
		// The whole command: the JSON string of the command, closed.
		b, _ := json.Marshal(spec)
		x.commandRegex = regexp.QuoteMeta(string(b[1:]))
	default:
		return nil, "", "gemini's commandPrefix matches the start of a command; a * inside the pattern has no counterpart"
	}
	return []geminiRule{x}, x.describe(), ""
}

// geminiProjectEnvs returns the .gemini/.env files of the project that
// gemini, started in its directory dir (sub below the project's root),
// would load: one in dir or a directory above it up to the root.
func geminiProjectEnvs(dir, sub string) []string {
	if dir == "" {
		return nil
	}
	var out []string
	for _, dir := range upToRoot(dir, sub) {
		p := filepath.Join(dir, ".gemini", ".env")
		if _, err := os.Lstat(p); err == nil {
			out = append(out, quote.Name(p))
		}
	}
	return out
}

// upToRoot returns dir, the directory a harness starts in, and each
// directory above it up to the project's root, sub being dir's path below
// that root ("" or "." for the root itself): where a harness looks for the
// project's configuration.
func upToRoot(dir, sub string) []string {
	levels := 0
	if sub != "" && sub != "." {
		levels = len(strings.Split(filepath.ToSlash(filepath.Clean(sub)), "/"))
	}
	out := make([]string, 0, levels+1)
	for i := 0; i <= levels; i++ {
		out = append(out, dir)
		dir = filepath.Dir(dir)
	}
	return out
}

// geminiPoliciesDir is the policies directory gemini reads when no
// --policy is given: the session home's (a copy of the user's), or the
// user's own without one; "" when neither is known.
func geminiPoliciesDir(env []string, home string) string {
	if home == "" {
		home = discover.GeminiHome(envLookup(env))
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".gemini", "policies")
}

// geminiUserSettings reads the user's gemini settings, the base of the
// session's: an empty object when there are none.
func geminiUserSettings(env []string) (map[string]any, error) {
	home := discover.GeminiHome(envLookup(env))
	if home == "" {
		return map[string]any{}, nil
	}
	m, err := discover.ReadGeminiSettings(filepath.Join(home, ".gemini", "settings.json"))
	if err != nil {
		return nil, fmt.Errorf("cannot read your gemini settings: %w", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// geminiUserGlobal returns the text of the user's own GEMINI.md in their
// gemini home, "" when there is none.
func geminiUserGlobal(env []string) string {
	home := discover.GeminiHome(envLookup(env))
	if home == "" {
		return ""
	}
	data, err := readSmall(filepath.Join(home, ".gemini", "GEMINI.md"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// settingAt returns the value at keys of a settings object, nil when
// absent.
func settingAt(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		o, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = o[k]
	}
	return v
}

// settingList returns the list at keys, and whether it was one.
func settingList(m map[string]any, keys ...string) ([]any, bool) {
	l, ok := settingAt(m, keys...).([]any)
	return l, ok
}

// setSetting sets the value at keys of a settings object, making the
// objects on the way (replacing what is not one).
func setSetting(m map[string]any, v any, keys ...string) {
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = v
}

// geminiUserApproval returns the flag of the arguments extra (the
// user's, after --) that chooses gemini's approval mode: --approval-mode
// (also as --approval-mode=MODE), --yolo or -y; "" when none does.
func geminiUserApproval(extra []string) string {
	for _, a := range extra {
		if a == "--" {
			break
		}
		flag, _, _ := strings.Cut(a, "=")
		switch flag {
		case "--approval-mode", "--yolo", "-y":
			return flag
		}
	}
	return ""
}

// geminiSessionFlags are gemini's flags that choose the conversation.
var geminiSessionFlags = []string{"-r", "--resume", "--session-id"}

// FixesSessionID reports whether harness h takes the id of a new
// conversation before the run (claude's and gemini's --session-id), so
// that workforce fixes it instead of reading it afterwards.
func FixesSessionID(h string) bool {
	return h == persona.HarnessClaude || h == persona.HarnessGemini
}

// ConversationFlags are the flags of harness h's command line that choose
// the conversation themselves: workforce then fixes no id.
func ConversationFlags(h string) []string {
	if h == persona.HarnessGemini {
		return slices.Clone(geminiSessionFlags)
	}
	return nil
}

// readSmall reads a file of configuration, at most 1 MiB of it.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 1<<20))
}
