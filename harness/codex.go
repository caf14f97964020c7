package harness

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/seed-3bc194a6/workforce/persona"
)

// Codex takes flags and -c overrides of its config.toml. Measured on
// 0.169.0 and 0.171.0 (make e2e, e2e/mapping_test.go):
//
//   - `codex exec` runs with the sandbox read-only and approval never
//     unless told otherwise; the sandbox and the approval policy reach the
//     model in its <permissions instructions> ("`sandbox_mode` is
//     `read-only`"). A read-only sandbox still offers apply_patch, whose
//     writes fail, and stops commands from writing.
//   - -c web_search="disabled" removes the web_search tool (which both
//     searches and opens pages); -c tools.web_search=false does not.
//   - --disable shell_tool removes exec_command and write_stdin.
//   - -c model_reasoning_effort="high" sets reasoning.effort (medium when
//     not given).
//   - --ask-for-approval takes on-request and never only; -c
//     approval_policy="on-failure" is accepted; "untrusted" is rejected as
//     no longer supported.
//   - -c mcp_servers.NAME.disabled_tools=[...] keeps those tools of a
//     server from the model. A server given by url is spoken to over
//     streamable HTTP: codex POSTs initialize to the URL and, when that
//     fails, does not fall back to an SSE GET, so an SSE server is refused.
//   - project_doc_max_bytes (32768 bytes unless configured) caps the text
//     of the project's AGENTS.md files codex sends; the end of the last
//     file is cut, and in extend mode the persona's text comes last.
//   - Command rules (prefix_rule) are read from rules files only, under
//     $CODEX_HOME/rules or a trusted project's .codex/rules; workforce
//     writes into neither, so codex refuses command patterns.
//   - Its sandbox (bubblewrap) cannot start inside workforce's write
//     sandbox (Landlock: no user namespace mapping, no mounts), so,
//     confined (Options.Confined), codex runs with --sandbox
//     danger-full-access and workforce's sandbox keeps the persona's
//     meaning: workspace-write is the tree writable, read-only the tree
//     read-only (Invocation.TreeReadOnly), and an escalation codex asks
//     for cannot lift it. Neither blocks the network then: codex's
//     sandbox did, in read-only and workspace-write; workforce's leaves
//     the network alone, so an explicit workspaceWriteNetworkAccess
//     false is refused. The interactive codex starts a shared background
//     server that outlives the session, outside its sandbox
//     (/tmp/codex-daemon-<uid>); --no-daemon runs without it, and codex
//     exec takes no such flag (docs/sandbox.md).
//   - With --sandbox danger-full-access its web_search tool is live
//     ("external_web_access": true) whatever -c web_search="cached" says;
//     without it, cached (false). A later -c web_search="disabled" wins
//     over an earlier "live".
const codexMeasured = "0.171.0"

// codexDocBudget is codex's default project_doc_max_bytes.
const codexDocBudget = 32768

// codexModes maps permissions.mode to codex's sandbox and approval policy,
// as Claude Code defines each mode: default asks before edits and
// commands (a read-only sandbox, escalations asked for); acceptEdits
// edits the workspace without asking (commands that stay in the workspace
// sandbox run without asking too); plan and dontAsk never edit nor ask;
// bypassPermissions allows everything.
var codexModes = map[string]struct{ sandbox, approval string }{
	"default":           {"read-only", "on-request"},
	"acceptEdits":       {"workspace-write", "on-request"},
	"plan":              {"read-only", "never"},
	"dontAsk":           {"read-only", "never"},
	"bypassPermissions": {"danger-full-access", "never"},
}

// codexApprovals says how codex takes each approval policy: a flag value,
// a -c override, or a reason it does not.
var codexApprovals = map[string]struct{ flag, config, refused string }{
	"on-request": {flag: "on-request"},
	"never":      {flag: "never"},
	"on-failure": {config: "on-failure"},
	"untrusted":  {refused: "codex " + codexMeasured + " no longer supports approval_policy \"untrusted\""},
}

// codexTool is what codex makes of a Claude Code tool in an allow or a
// deny rule without a specifier.
type codexTool struct {
	deny, allow codexEffect
	// denyWhy and allowWhy say why, when the effect is codexRefuse, or
	// what, when it is codexNothing.
	denyWhy, allowWhy string
}

type codexEffect int

const (
	codexRefuse     codexEffect = iota
	codexNothing                // nothing to pass: codex behaves so already
	codexReadOnly               // a read-only sandbox
	codexWorkspace              // a workspace-write sandbox
	codexNoWeb                  // web_search disabled
	codexNoShell                // shell_tool disabled
	codexEditFamily             // one of the edit tools
)

const (
	codexNoReadTool = "codex reads files through its shell (exec_command); it has no read tool to deny"
	codexReadsFree  = "nothing: codex reads files without asking"
	codexNoRules    = "codex takes command rules only from rules files in its home or in a trusted project, which workforce does not write"
	codexWebFree    = "nothing: codex's web_search tool needs no approval"
)

// codexTools maps Claude Code's tools to codex's controls.
var codexTools = map[string]codexTool{
	"Bash":         {deny: codexNoShell, allow: codexRefuse, allowWhy: "codex runs commands without asking only by its sandbox and approval policy, or by rules files workforce does not write"},
	"Edit":         {deny: codexEditFamily, allow: codexEditFamily},
	"Write":        {deny: codexEditFamily, allow: codexEditFamily},
	"MultiEdit":    {deny: codexEditFamily, allow: codexEditFamily},
	"NotebookEdit": {deny: codexEditFamily, allow: codexEditFamily},
	"Read":         {deny: codexRefuse, denyWhy: codexNoReadTool, allow: codexNothing, allowWhy: codexReadsFree},
	"Glob":         {deny: codexRefuse, denyWhy: codexNoReadTool, allow: codexNothing, allowWhy: codexReadsFree},
	"Grep":         {deny: codexRefuse, denyWhy: codexNoReadTool, allow: codexNothing, allowWhy: codexReadsFree},
	"LS":           {deny: codexRefuse, denyWhy: codexNoReadTool, allow: codexNothing, allowWhy: codexReadsFree},
	"WebFetch":     {deny: codexNoWeb, allow: codexNothing, allowWhy: codexWebFree},
	"WebSearch":    {deny: codexNoWeb, allow: codexNothing, allowWhy: codexWebFree},
}

// codexState is the sandbox and approval policy being decided.
type codexState struct {
	sandbox, approval string
	noWeb, noShell    bool
	// disabled lists MCP tools kept from the model, by server; dropped
	// the servers not given at all.
	disabled map[string][]string
	dropped  map[string]bool
	// confined says workforce's write sandbox replaces codex's own
	// (Options.Confined).
	confined bool
}

// codexSandboxArg is the --sandbox codex gets for the sandbox mode s:
// s itself, or, confined, danger-full-access (its own sandbox cannot
// start inside workforce's).
func codexSandboxArg(s string, confined bool) string {
	if confined {
		return "danger-full-access"
	}
	return s
}

// codexTreeNote says, confined, what workforce's write sandbox makes of
// codex's sandbox mode s; empty unconfined.
func codexTreeNote(s string, confined bool) string {
	switch {
	case !confined:
		return ""
	case s == "read-only":
		return " (codex's own sandbox cannot start inside workforce's: workforce's keeps the tree read-only, and an approved request for more cannot lift it)"
	case s == "workspace-write":
		return " (codex's own sandbox cannot start inside workforce's: workforce's lets it write the tree only)"
	}
	return " (workforce's write sandbox still lets it write the tree only)"
}

func planCodex(inv *Invocation, r *persona.Resolved, o Options, m *Mapping, lookup func(string) string) error {
	model := r.Model
	if _, after, ok := strings.Cut(model, "/"); ok {
		model = after
	}
	if model == persona.ModelInherit {
		inv.Args = []string{}
		m.apply(FieldModel, r.Model, "no -m: codex's own default model")
	} else {
		inv.Args = []string{"-m", model}
		how := "-m " + model
		if model != r.Model {
			how += " (codex names models without their provider)"
		}
		m.apply(FieldModel, r.Model, how)
	}

	hs := r.HarnessSettings
	bypass := hs.DangerouslyBypassApprovalsAndSandbox != nil && *hs.DangerouslyBypassApprovalsAndSandbox
	if bypass && (hs.SandboxMode != "" || hs.ApprovalPolicy != "" || hs.WorkspaceWriteNetworkAccess != nil) {
		return errors.New("harnessSettings: dangerouslyBypassApprovalsAndSandbox excludes sandboxMode, approvalPolicy and workspaceWriteNetworkAccess")
	}
	st := codexState{disabled: map[string][]string{}, dropped: map[string]bool{}, confined: o.Confined}

	// The persona's permissions, as codex's sandbox and approval policy:
	// the mode's, narrowed by a deny of an edit tool, widened by an allow
	// of Edit and Write (but in plan mode).
	mode := r.Permissions.Mode
	mm, knownMode := codexModes[mode]
	allow, deny := parseRules(r.Permissions)
	allow, deny = refuseBadRules(m, allow), refuseBadRules(m, deny)
	denyEdit := false
	for _, e := range deny {
		if editTools[e.rule.Tool] && e.rule.Specifier == "" {
			denyEdit = true
		}
	}
	allowEdit := editPair(allow)
	derive := func(withMode bool) {
		st.sandbox, st.approval = "", ""
		if withMode && knownMode {
			st.sandbox, st.approval = mm.sandbox, mm.approval
		}
		if allowEdit && !(withMode && mode == "plan") && (st.sandbox == "" || st.sandbox == "read-only") {
			st.sandbox = "workspace-write"
		}
		if denyEdit {
			st.sandbox = "read-only"
		}
	}
	derive(true)
	// Codex's own settings win; a permission value they contradict is
	// refused.
	conflict := func(field, value string) string {
		switch {
		case bypass:
			return "harnessSettings.dangerouslyBypassApprovalsAndSandbox contradicts it on codex"
		case hs.SandboxMode != "" && field == FieldSandboxMode && hs.SandboxMode != value:
			return fmt.Sprintf("harnessSettings.sandboxMode %s contradicts it on codex (it needs %s)", hs.SandboxMode, value)
		case hs.ApprovalPolicy != "" && field == FieldApprovalPolicy && hs.ApprovalPolicy != value:
			return fmt.Sprintf("harnessSettings.approvalPolicy %s contradicts it on codex (it needs %s)", hs.ApprovalPolicy, value)
		}
		return ""
	}
	if mode != "" {
		switch {
		case !knownMode:
			m.refuse(FieldMode, mode, "codex has no counterpart of this permission mode")
			derive(false)
		case mode == "bypassPermissions" && bypass:
			m.apply(FieldMode, mode, "--dangerously-bypass-approvals-and-sandbox")
		default:
			why := conflict(FieldSandboxMode, st.sandbox)
			if why == "" {
				why = conflict(FieldApprovalPolicy, st.approval)
			}
			if why != "" {
				// Refused, the mode adds nothing.
				m.refuse(FieldMode, mode, why)
				derive(false)
				break
			}
			how := fmt.Sprintf("--sandbox %s --ask-for-approval %s", codexSandboxArg(st.sandbox, o.Confined), st.approval)
			if st.sandbox == "danger-full-access" && st.approval == "never" {
				how = "--dangerously-bypass-approvals-and-sandbox"
			}
			how += codexTreeNote(st.sandbox, o.Confined)
			switch {
			case st.sandbox != mm.sandbox:
				how += " (the persona's edit rules change the mode's sandbox, " + mm.sandbox + ")"
			case mode == "acceptEdits" && o.Confined:
				how += " (commands run without asking too, inside workforce's sandbox)"
			case mode == "acceptEdits":
				how += " (commands that stay in the workspace sandbox run without asking too)"
			}
			m.apply(FieldMode, mode, how)
		}
	}
	for _, list := range []struct {
		allow   bool
		entries []ruleEntry
	}{{true, allow}, {false, deny}} {
		for _, e := range list.entries {
			codexRule(m, &st, e, list.allow, allowEdit, denyEdit, r, conflict)
		}
	}

	// Codex's own settings.
	if bypass {
		m.apply(FieldBypass, "true", "--dangerously-bypass-approvals-and-sandbox")
	}
	if v := hs.SandboxMode; v != "" {
		st.sandbox = v
		m.apply(FieldSandboxMode, v, "--sandbox "+codexSandboxArg(v, o.Confined)+codexTreeNote(v, o.Confined))
	}
	if v := hs.ApprovalPolicy; v != "" {
		a, ok := codexApprovals[v]
		switch {
		case !ok:
			m.refuse(FieldApprovalPolicy, v, "codex has no such approval policy")
			st.approval = ""
		case a.refused != "":
			m.refuse(FieldApprovalPolicy, v, a.refused)
			st.approval = ""
		default:
			st.approval = v
		}
	}
	switch {
	case bypass, hs.SandboxMode == "" && hs.ApprovalPolicy == "" && st.sandbox == "danger-full-access" && st.approval == "never":
		inv.Args = append(inv.Args, "--dangerously-bypass-approvals-and-sandbox")
	default:
		if st.sandbox != "" || o.Confined {
			inv.Args = append(inv.Args, "--sandbox", codexSandboxArg(st.sandbox, o.Confined))
		}
		if a := codexApprovals[st.approval]; a.flag != "" {
			inv.Args = append(inv.Args, "--ask-for-approval", a.flag)
		} else if a.config != "" {
			inv.Args = append(inv.Args, "-c", "approval_policy="+tomlString(a.config))
		}
	}
	if v := hs.ApprovalPolicy; v != "" && st.approval == v {
		if a := codexApprovals[v]; a.flag != "" {
			m.apply(FieldApprovalPolicy, v, "--ask-for-approval "+a.flag)
		} else {
			m.apply(FieldApprovalPolicy, v, "-c approval_policy="+tomlString(a.config)+" (--ask-for-approval does not take it)")
		}
	}

	if v := hs.Reasoning; v != "" {
		inv.Args = append(inv.Args, "-c", "model_reasoning_effort="+tomlString(v))
		m.apply(FieldReasoning, v, "-c model_reasoning_effort="+tomlString(v))
	}
	if v := hs.WorkspaceWriteNetworkAccess; v != nil {
		kv := fmt.Sprintf("sandbox_workspace_write.network_access=%t", *v)
		switch {
		case o.Confined && !*v:
			m.apply(FieldNetworkAccess, "false", networkNone)
		case o.Confined:
			m.apply(FieldNetworkAccess, "true", networkAsPolicy)
		default:
			inv.Args = append(inv.Args, "-c", kv)
			m.apply(FieldNetworkAccess, fmt.Sprint(*v), "-c "+kv)
		}
	}
	if v := hs.WebSearch; v != nil {
		mode := "live"
		if !*v {
			mode = "disabled"
		}
		m.apply(FieldWebSearch, fmt.Sprint(*v), "-c web_search="+tomlString(mode))
		if *v && !st.noWeb {
			inv.Args = append(inv.Args, "-c", "web_search="+tomlString(mode))
		}
		st.noWeb = st.noWeb || !*v
	}
	if st.noWeb {
		inv.Args = append(inv.Args, "-c", `web_search="disabled"`)
	}
	if st.noShell {
		inv.Args = append(inv.Args, "--disable", "shell_tool")
	}

	if o.Confined {
		// A persona that sets no mode gets, in a one-shot run, what codex
		// exec does by default: a read-only sandbox (measured, above).
		execDefault := st.sandbox == "" && o.oneShot
		inv.TreeReadOnly = (st.sandbox == "read-only" || execDefault) && !bypass
		how := "codex's own sandbox off (--sandbox danger-full-access; bubblewrap cannot start inside Landlock): workforce's lets it write "
		switch {
		case inv.TreeReadOnly && execDefault:
			how += "nothing of the tree (codex exec's own default, read-only, as the persona sets no permissions.mode)"
		case inv.TreeReadOnly:
			how += "nothing of the tree (the persona's read-only sandbox)"
		default:
			how += "the tree"
		}
		how += " and the session's tmp; its commands reach the network, which codex's sandbox blocked, as the run's network policy allows"
		_, args, _ := networkSwitches(persona.HarnessCodex)
		inv.Args = append(inv.Args, args...)
		how += "; " + strings.Join(args, " ") + " (no plugin or analytics traffic)"
		brokered := false
		if u := o.BrokerURLs["openai"]; u != "" {
			// The broker adds the real key: codex sends the placeholder
			// it got as CODEX_API_KEY or in auth.json.
			inv.Args = append(inv.Args, "-c", "openai_base_url="+tomlString(u))
			how += "; -c openai_base_url=" + tomlString(u) + " (the API key brokered: codex holds a placeholder)"
			brokered = true
		}
		for _, k := range slices.Sorted(maps.Keys(o.BrokerURLs)) {
			// A model provider of the user's own whose env_key is
			// brokered: its base_url (the rest of it kept, measured).
			if id, ok := strings.CutPrefix(k, "model_providers."); ok && id != "" {
				kv := "model_providers." + tomlKey(id) + ".base_url=" + tomlString(o.BrokerURLs[k])
				inv.Args = append(inv.Args, "-c", kv)
				how += "; -c " + kv + " (your model provider's key brokered)"
				brokered = true
			}
		}
		if brokered {
			if o.NetworkMode != "open" && !st.noWeb {
				// With danger-full-access codex's web_search tool is live
				// (external_web_access true; -c web_search="cached" does
				// not change it, measured on 0.169.0), and the broker
				// refuses every request offering it unless the network is
				// open: the run would fail at its first request.
				inv.Args = append(inv.Args, "-c", `web_search="disabled"`)
				how += `; -c web_search="disabled" (confined, codex's web search is live, which the broker lets through only under --network open)`
				if v := hs.WebSearch; v != nil && *v {
					inv.Notes = append(inv.Notes, "harnessSettings.webSearch true: codex's web search is live, which the run's network does not let the provider do for the agent (only --network open does): it is turned off")
				}
			}
		}
		if !o.oneShot {
			inv.Args = append(inv.Args, "--no-daemon")
			how += "; --no-daemon (its shared server would outlive the session, outside the sandbox)"
		}
		m.apply(FieldWriteSandbox, "on", how)
	}

	servers := expandMCP(r.MCPServers, lookup)
	for _, n := range mcpNames(servers) {
		s := servers[n]
		key := "mcp_servers." + tomlKey(n)
		switch {
		case st.dropped[n]:
			continue
		case s.Type == "stdio":
			inv.Args = append(inv.Args, "-c", key+".command="+tomlString(s.Command))
			if len(s.Args) > 0 {
				inv.Args = append(inv.Args, "-c", key+".args="+tomlArray(s.Args))
			}
			if len(s.Env) > 0 {
				inv.Args = append(inv.Args, "-c", key+".env="+tomlTable(s.Env))
			}
			m.apply(FieldMCP, n, "-c "+key+".command (stdio)")
		case s.Type == "sse":
			m.refuse(FieldMCP, n, "codex connects to MCP servers over stdio or streamable HTTP, not SSE")
			continue
		default:
			inv.Args = append(inv.Args, "-c", key+".url="+tomlString(s.URL))
			if len(s.Headers) > 0 {
				inv.Args = append(inv.Args, "-c", key+".http_headers="+tomlTable(s.Headers))
			}
			m.apply(FieldMCP, n, "-c "+key+".url (streamable HTTP)")
		}
		if tools := st.disabled[n]; len(tools) > 0 {
			sort.Strings(tools)
			inv.Args = append(inv.Args, "-c", key+".disabled_tools="+tomlArray(tools))
		}
	}

	if n := o.InstructionBytes; n > codexDocBudget {
		inv.Args = append(inv.Args, "-c", fmt.Sprintf("project_doc_max_bytes=%d", n))
		m.apply(FieldAgentsMd, fmt.Sprintf("%d bytes", n), fmt.Sprintf("-c project_doc_max_bytes=%d (codex reads %d bytes of AGENTS.md text by default and would cut the end)", n, codexDocBudget))
	} else if n > 0 {
		m.apply(FieldAgentsMd, fmt.Sprintf("%d bytes", n), fmt.Sprintf("nothing: within codex's default budget of %d bytes", codexDocBudget))
	}
	if r.SystemPrompt != "" {
		inv.Args = append(inv.Args, r.SystemPrompt)
	}
	return nil
}

// codexRule maps one allow or deny rule to codex.
func codexRule(m *Mapping, st *codexState, e ruleEntry, allow, allowEdit, denyEdit bool, r *persona.Resolved, conflict func(field, value string) string) {
	rule := e.rule
	if server, tool, ok := rule.MCP(); ok {
		if allow {
			m.refuse(e.field, e.raw, "codex has no per-tool approval of MCP tools that workforce sets")
			return
		}
		if _, mine := r.MCPServers[server]; !mine {
			m.refuse(e.field, e.raw, fmt.Sprintf("workforce gives codex only the persona's MCP servers, and %s is not one of them", server))
			return
		}
		if tool == "" || tool == "*" {
			st.dropped[server] = true
			m.apply(e.field, e.raw, fmt.Sprintf("mcp_servers.%s not given to codex", tomlKey(server)))
			return
		}
		st.disabled[server] = append(st.disabled[server], tool)
		m.apply(e.field, e.raw, fmt.Sprintf("-c mcp_servers.%s.disabled_tools=[%s]", tomlKey(server), tomlString(tool)))
		return
	}
	t, ok := codexTools[rule.Tool]
	if !ok {
		m.refuse(e.field, e.raw, fmt.Sprintf("codex has no counterpart of Claude Code's %s tool", rule.Tool))
		return
	}
	if rule.Specifier != "" {
		switch {
		case allow && (t.allow == codexNothing):
			m.apply(e.field, e.raw, t.allowWhy)
		case rule.Tool == "Bash":
			m.refuse(e.field, e.raw, codexNoRules)
		case editTools[rule.Tool]:
			m.refuse(e.field, e.raw, "codex's sandbox cannot limit edits to some paths")
		case rule.Tool == "WebFetch":
			m.refuse(e.field, e.raw, "codex's web_search tool cannot be limited to some domains")
		case !allow && t.deny == codexRefuse:
			m.refuse(e.field, e.raw, t.denyWhy)
		default:
			m.refuse(e.field, e.raw, "codex takes no specifier for this tool")
		}
		return
	}
	effect, why := t.deny, t.denyWhy
	if allow {
		effect, why = t.allow, t.allowWhy
	}
	switch effect {
	case codexNothing:
		m.apply(e.field, e.raw, why)
	case codexRefuse:
		m.refuse(e.field, e.raw, why)
	case codexEditFamily:
		switch {
		case !allow:
			if c := conflict(FieldSandboxMode, "read-only"); c != "" {
				m.refuse(e.field, e.raw, c)
				return
			}
			if st.confined {
				m.apply(e.field, e.raw, "the tree read-only in workforce's write sandbox (every edit stops: apply_patch's and those of commands)")
				return
			}
			m.apply(e.field, e.raw, "--sandbox read-only (codex's sandbox stops every edit: apply_patch's and those of commands)")
		case !allowEdit:
			m.refuse(e.field, e.raw, "codex's workspace-write sandbox lets every edit tool write; allow Edit and Write together")
		case denyEdit:
			m.apply(e.field, e.raw, "nothing: a deny of an edit tool wins ("+codexReadOnlyHow(st.confined)+")")
		case r.Permissions.Mode == "plan":
			m.apply(e.field, e.raw, "nothing: plan mode never edits ("+codexReadOnlyHow(st.confined)+")")
		default:
			if c := conflict(FieldSandboxMode, "workspace-write"); c != "" {
				m.refuse(e.field, e.raw, c)
				return
			}
			if st.confined {
				m.apply(e.field, e.raw, "the tree writable in workforce's write sandbox (edits in the workspace without asking)")
				return
			}
			m.apply(e.field, e.raw, "--sandbox workspace-write (edits in the workspace without asking)")
		}
	case codexNoWeb:
		if hs := r.HarnessSettings.WebSearch; hs != nil && *hs {
			m.refuse(e.field, e.raw, "harnessSettings.webSearch true contradicts it on codex")
			return
		}
		st.noWeb = true
		m.apply(e.field, e.raw, `-c web_search="disabled" (codex's one web_search tool both searches and opens pages)`)
	case codexNoShell:
		st.noShell = true
		m.apply(e.field, e.raw, "--disable shell_tool (removes exec_command and write_stdin)")
	}
}

// codexReadOnlyHow names the read-only sandbox: codex's, or, confined,
// workforce's.
func codexReadOnlyHow(confined bool) string {
	if confined {
		return "the tree read-only in workforce's write sandbox"
	}
	return "--sandbox read-only"
}

func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlKey(k string) string {
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return tomlString(k)
		}
	}
	return k
}

func tomlArray(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = tomlString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func tomlTable(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = tomlKey(k) + " = " + tomlString(m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
