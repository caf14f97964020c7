package harness

//go:generate go run ./internal/harnessdoc -o ../docs/harnesses.md

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/persona"
)

// The persona fields the mapping covers, spelled as in a persona file.
// Each harness applies each value of these fields through its own
// mechanism, or refuses it: nothing is dropped silently.
const (
	FieldModel     = "model"
	FieldReasoning = "harnessSettings.reasoning"
	FieldMode      = "permissions.mode"
	FieldAllow     = "permissions.allow"
	FieldDeny      = "permissions.deny"
	FieldMCP       = "mcpServers"
	FieldTimeout   = "harnessSettings.timeoutSeconds"
	// FieldSystemPrompt is listed only where a harness refuses it: gemini
	// without a per-session home.
	FieldSystemPrompt = "systemPrompt"
	// Codex's own settings, which only codex reads.
	FieldSandboxMode    = "harnessSettings.sandboxMode"
	FieldApprovalPolicy = "harnessSettings.approvalPolicy"
	FieldWebSearch      = "harnessSettings.webSearch"
	FieldNetworkAccess  = "harnessSettings.workspaceWriteNetworkAccess"
	FieldBypass         = "harnessSettings.dangerouslyBypassApprovalsAndSandbox"
	// FieldAgentsMd is the AGENTS.md workforce materializes, whose size
	// codex's instruction budget must hold.
	FieldAgentsMd = "agentsMd"
	// FieldWriteSandbox is not a persona field but workforce's write
	// sandbox (run --sandbox, "sandbox" in config.json), value "on" when
	// the harness runs confined: what the harness's own sandbox becomes
	// (Options.Confined).
	FieldWriteSandbox = "sandbox"
)

// fieldOrder is the order the fields of a Mapping are listed in.
var fieldOrder = []string{
	FieldModel, FieldSystemPrompt, FieldReasoning, FieldTimeout, FieldMode, FieldAllow, FieldDeny, FieldMCP,
	FieldSandboxMode, FieldApprovalPolicy, FieldWebSearch, FieldNetworkAccess, FieldBypass, FieldAgentsMd,
	FieldWriteSandbox,
}

// sortFields orders m's fields by fieldOrder, keeping the order of the
// values of one field.
func (m *Mapping) sortFields() {
	rank := map[string]int{}
	for i, f := range fieldOrder {
		rank[f] = i
	}
	sort.SliceStable(m.Fields, func(i, j int) bool { return rank[m.Fields[i].Field] < rank[m.Fields[j].Field] })
}

// Measured names the harness versions the mapping of each harness was
// measured on (make e2e, e2e/mapping_test.go), by harness.
var Measured = map[string]string{
	persona.HarnessClaude:   claudeMeasured,
	persona.HarnessOpencode: opencodeMeasured,
	persona.HarnessCodex:    codexMeasured,
	persona.HarnessGemini:   geminiMeasured,
}

// Mapping is what one harness gets for each persona value that changes
// what the agent may do or how it runs.
type Mapping struct {
	Harness string `json:"harness"`
	// Measured names the harness version the mapping was measured on.
	Measured string         `json:"measured"`
	Fields   []FieldMapping `json:"fields"`
}

// FieldMapping is one persona value and what the harness gets for it:
// Applied says what, in the harness's own terms (a flag, a configuration
// key), or Refused says why the harness cannot express the value.
type FieldMapping struct {
	Field   string `json:"field"`
	Value   string `json:"value"`
	Applied string `json:"applied,omitempty"`
	Refused string `json:"refused,omitempty"`
}

func (f FieldMapping) String() string {
	if f.Refused != "" {
		return fmt.Sprintf("%s %s: refused: %s", f.Field, f.Value, f.Refused)
	}
	return fmt.Sprintf("%s %s: %s", f.Field, f.Value, f.Applied)
}

func (m *Mapping) apply(field, value, applied string) {
	m.Fields = append(m.Fields, FieldMapping{Field: field, Value: value, Applied: applied})
}

func (m *Mapping) refuse(field, value, why string) {
	m.Fields = append(m.Fields, FieldMapping{Field: field, Value: value, Refused: why})
}

// Refused returns the values the harness cannot express.
func (m *Mapping) Refused() []FieldMapping {
	var out []FieldMapping
	for _, f := range m.Fields {
		if f.Refused != "" {
			out = append(out, f)
		}
	}
	return out
}

// Err returns an *UnmappedError when the harness refused any value, else
// nil.
func (m *Mapping) Err() error {
	if r := m.Refused(); len(r) > 0 {
		return &UnmappedError{Harness: m.Harness, Refused: r}
	}
	return nil
}

// Warnings returns one warning per refused value, for a run that starts
// anyway (--allow-unmapped).
func (m *Mapping) Warnings() []string {
	var out []string
	for _, f := range m.Refused() {
		out = append(out, fmt.Sprintf("%s does not apply %s %q (--allow-unmapped): %s", m.Harness, f.Field, f.Value, f.Refused))
	}
	return out
}

// WriteText writes the mapping for people: a heading line, then a line per
// value, "FIELD VALUE: what the harness gets" or "FIELD VALUE: refused:
// why".
func (m *Mapping) WriteText(w io.Writer) {
	fmt.Fprintf(w, "mapping for %s (measured on %s):\n", m.Harness, m.Measured)
	if len(m.Fields) == 0 {
		fmt.Fprintln(w, "  nothing to map")
	}
	for _, f := range m.Fields {
		fmt.Fprintf(w, "  %s\n", f)
	}
}

// UnmappedError reports persona values a harness cannot express: run
// refuses to start rather than run the agent with less than the persona
// says (--allow-unmapped starts it anyway).
type UnmappedError struct {
	Harness string
	Refused []FieldMapping
}

func (e *UnmappedError) Error() string {
	parts := make([]string, len(e.Refused))
	for i, f := range e.Refused {
		parts[i] = fmt.Sprintf("%s %q: %s", f.Field, f.Value, f.Refused)
	}
	if len(parts) == 1 {
		return fmt.Sprintf("%s cannot apply %s", e.Harness, parts[0])
	}
	return fmt.Sprintf("%s cannot apply %d persona values: %s", e.Harness, len(parts), strings.Join(parts, "; "))
}

// Hint tells how to run anyway.
func (e *UnmappedError) Hint() string {
	return "run it on another harness with --harness, change the persona, or start it without these values with --allow-unmapped"
}

// Map returns what harness r.Harness makes of r, the persona resolved
// for a tier, without the caller's environment: what `show --harness`
// prints. An error is returned only for a persona no harness can take.
func Map(r *persona.Resolved, o Options) (*Mapping, error) {
	o.AllowUnmapped = true
	if o.ConfigDir == "" {
		o.ConfigDir = "/config"
	}
	if o.State == nil && r.Harness == persona.HarnessGemini {
		// As a run with a sandbox has: a per-session gemini home.
		o.State = []string{"GEMINI_CLI_HOME=/state/" + geminiHomeRel}
	}
	inv, err := Plan(r, o)
	if err != nil {
		return nil, err
	}
	return inv.Mapping, nil
}

// What harnessSettings.workspaceWriteNetworkAccess means in a confined
// run, on every harness: false narrows the run's network policy to mode
// none (package session adds it to the plan's narrowings), true leaves
// the policy as it is (a persona never widens it). Unconfined, codex
// keeps its own meaning (its sandbox's network switch) and the others
// refuse it.
const (
	networkNone     = "network mode none: workforce's proxy lets the harness reach its own API and login hosts only (the run's network policy narrowed)"
	networkAsPolicy = "nothing: the run's network policy decides, which a persona never widens"
)

// planCommon maps what every harness takes the same way, the run's time
// limit, and refuses codex's own settings on the other harnesses; it
// records that opencode, which has no sandbox of its own, has nothing to
// turn off inside workforce's.
func planCommon(inv *Invocation, r *persona.Resolved, o Options, m *Mapping) {
	hs := r.HarnessSettings
	if t := hs.TimeoutSeconds; t > 0 {
		inv.Timeout = time.Duration(t) * time.Second
		m.apply(FieldTimeout, strconv.Itoa(t), fmt.Sprintf("workforce stops the harness after %d s when stdin is not a terminal (with --timeout, on a terminal too): SIGTERM, SIGKILL %d s later, then sync-back; exit status 124", t, int(StopGrace/time.Second)))
	}
	if o.Confined && r.Harness == persona.HarnessOpencode {
		env, _, _ := networkSwitches(persona.HarnessOpencode)
		inv.SetEnv = append(inv.SetEnv, env...)
		m.apply(FieldWriteSandbox, "on", "nothing to turn off: opencode has no sandbox of its own; workforce's lets it write the tree and the session's tmp; "+
			strings.Join(env, " ")+" (no model-list traffic)")
	}
	if r.Harness == persona.HarnessCodex {
		return
	}
	h := r.Harness
	if v := hs.SandboxMode; v != "" {
		m.refuse(FieldSandboxMode, v, "codex's sandbox setting; "+h+" has no such sandbox (permissions.deny of Edit and Write keeps every harness from editing)")
	}
	if v := hs.ApprovalPolicy; v != "" {
		m.refuse(FieldApprovalPolicy, v, "codex's approval setting; "+h+" has no such setting (permissions.mode says it for every harness)")
	}
	if v := hs.WebSearch; v != nil {
		m.refuse(FieldWebSearch, strconv.FormatBool(*v), "codex's web search setting; permissions.deny of WebSearch says it for every harness")
	}
	if v := hs.WorkspaceWriteNetworkAccess; v != nil {
		switch {
		case o.Confined && !*v:
			m.apply(FieldNetworkAccess, "false", networkNone)
		case o.Confined:
			m.apply(FieldNetworkAccess, "true", networkAsPolicy)
		default:
			m.refuse(FieldNetworkAccess, strconv.FormatBool(*v), "codex's sandbox setting; "+h+" has no such sandbox, and unconfined (--sandbox=off) workforce keeps no network policy")
		}
	}
	if v := hs.DangerouslyBypassApprovalsAndSandbox; v != nil {
		m.refuse(FieldBypass, strconv.FormatBool(*v), "codex's own switch; permissions.mode bypassPermissions says it for every harness")
	}
}

// ruleEntry is one permission rule of a persona, parsed.
type ruleEntry struct {
	field string // FieldAllow or FieldDeny
	raw   string
	rule  Rule
	err   error
}

// parseRules parses the persona's allow and deny rules.
func parseRules(p persona.Permissions) (allow, deny []ruleEntry) {
	for _, list := range []struct {
		field string
		rules []string
		out   *[]ruleEntry
	}{{FieldAllow, p.Allow, &allow}, {FieldDeny, p.Deny, &deny}} {
		for _, raw := range list.rules {
			r, err := ParseRule(raw)
			*list.out = append(*list.out, ruleEntry{field: list.field, raw: raw, rule: r, err: err})
		}
	}
	return allow, deny
}

// refuseBadRules records the rules that do not parse as refused, and
// returns the others.
func refuseBadRules(m *Mapping, entries []ruleEntry) []ruleEntry {
	var ok []ruleEntry
	for _, e := range entries {
		if e.err != nil {
			m.refuse(e.field, e.raw, "not a Claude Code permission rule: "+e.err.Error())
			continue
		}
		ok = append(ok, e)
	}
	return ok
}

// editTools are Claude Code's tools that change files. Claude Code 2.1.330
// denies each by its own name (denying Edit leaves Write offered and
// working), while a path rule Edit(PATH) covers them all; opencode and
// codex have one control for every edit.
var editTools = map[string]bool{"Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true}

// editPair reports whether entries name both Edit and Write without a
// specifier: what a harness with one edit control can allow exactly.
func editPair(entries []ruleEntry) bool {
	var edit, write bool
	for _, e := range entries {
		if e.rule.Specifier == "" {
			edit = edit || e.rule.Tool == "Edit"
			write = write || e.rule.Tool == "Write"
		}
	}
	return edit && write
}

// mcpNames returns the persona's MCP server names, sorted.
func mcpNames(servers map[string]persona.MCPServer) []string {
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// docExample is one row of the mapping table in docs/harnesses.md: a
// persona value (or values that map together) and the resolved persona
// that holds it.
type docExample struct {
	field, value string
	r            persona.Resolved
	o            Options
}

func docRules(field string, rules ...string) docExample {
	p := persona.Permissions{}
	if field == FieldAllow {
		p.Allow = rules
	} else {
		p.Deny = rules
	}
	return docExample{field: field, value: strings.Join(rules, ", "), r: persona.Resolved{Permissions: p}}
}

// docExamples are the rows of the mapping table: every rule form and value
// the mapping knows, and some it refuses.
func docExamples() []docExample {
	var ex []docExample
	ex = append(ex,
		docExample{field: FieldModel, value: "claude-opus-4-1", r: persona.Resolved{Model: "claude-opus-4-1"}},
		docExample{field: FieldModel, value: "openai/gpt-5-mini", r: persona.Resolved{Model: "openai/gpt-5-mini"}},
		docExample{field: FieldModel, value: persona.ModelInherit, r: persona.Resolved{Model: persona.ModelInherit}},
	)
	for _, v := range []string{"low", "medium", "high"} {
		ex = append(ex, docExample{field: FieldReasoning, value: v, r: persona.Resolved{HarnessSettings: persona.HarnessSettings{Reasoning: v}}})
	}
	ex = append(ex, docExample{field: FieldReasoning, value: "high, model claude-sonnet-4-5", r: persona.Resolved{Model: "claude-sonnet-4-5", HarnessSettings: persona.HarnessSettings{Reasoning: "high"}}})
	ex = append(ex, docExample{field: FieldTimeout, value: "900", r: persona.Resolved{HarnessSettings: persona.HarnessSettings{TimeoutSeconds: 900}}})
	for _, v := range []string{"default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"} {
		ex = append(ex, docExample{field: FieldMode, value: v, r: persona.Resolved{Permissions: persona.Permissions{Mode: v}}})
	}
	for _, field := range []string{FieldAllow, FieldDeny} {
		for _, rules := range [][]string{
			{"Edit", "Write"}, {"Edit"}, {"Write"}, {"Edit(/src/**)"}, {"Read"}, {"Read(./.env)"}, {"Read(~/.ssh/**)"},
			{"Glob"}, {"Grep"}, {"LS"}, {"Bash"}, {"Bash(git push:*)"}, {"Bash(npm run *)"},
			{"WebFetch"}, {"WebFetch(domain:example.com)"}, {"WebSearch"},
			{"Task"}, {"TodoWrite"}, {"Skill"}, {"mcp__docs"}, {"mcp__docs__search"}, {"mcp__other__search"}, {"Bash("},
		} {
			e := docRules(field, rules...)
			if strings.HasPrefix(rules[0], "mcp__") {
				e.r.MCPServers = map[string]persona.MCPServer{"docs": {Type: "stdio", Command: "docs-mcp"}}
			}
			ex = append(ex, e)
		}
	}
	for _, s := range []persona.MCPServer{{Type: "stdio", Command: "docs-mcp"}, {Type: "http", URL: "https://example.com/mcp"}, {Type: "sse", URL: "https://example.com/sse"}} {
		ex = append(ex, docExample{field: FieldMCP, value: "docs (" + s.Type + ")", r: persona.Resolved{MCPServers: map[string]persona.MCPServer{"docs": s}}})
	}
	for _, v := range []string{"read-only", "workspace-write", "danger-full-access"} {
		ex = append(ex, docExample{field: FieldSandboxMode, value: v, r: persona.Resolved{HarnessSettings: persona.HarnessSettings{SandboxMode: v}}})
	}
	for _, v := range []string{"untrusted", "on-failure", "on-request", "never"} {
		ex = append(ex, docExample{field: FieldApprovalPolicy, value: v, r: persona.Resolved{HarnessSettings: persona.HarnessSettings{ApprovalPolicy: v}}})
	}
	ex = append(ex,
		docExample{field: FieldWebSearch, value: "false", r: persona.Resolved{HarnessSettings: persona.HarnessSettings{WebSearch: ptrTo(false)}}},
		docExample{field: FieldNetworkAccess, value: "true", r: persona.Resolved{HarnessSettings: persona.HarnessSettings{WorkspaceWriteNetworkAccess: ptrTo(true)}}},
		docExample{field: FieldBypass, value: "true", r: persona.Resolved{HarnessSettings: persona.HarnessSettings{DangerouslyBypassApprovalsAndSandbox: ptrTo(true)}}},
		docExample{field: FieldAgentsMd, value: "40000 bytes", o: Options{InstructionBytes: 40000}},
	)
	return ex
}

func ptrTo[T any](v T) *T { return &v }

// MappingDoc renders docs/harnesses.md: the mapping table of every
// harness, made by mapping an example persona per row with the same code
// run uses.
func MappingDoc() string {
	var b strings.Builder
	b.WriteString(`# What each harness gets from a persona

<!-- Code generated by go generate ./harness; DO NOT EDIT. -->

A persona means the same on every harness. For every persona value that changes what the agent may do or how it
runs, each harness either applies it through its own mechanism (claude: flags; opencode: the agent it runs, in the
session config file named by ` + "`OPENCODE_CONFIG`" + ` and in ` + "`OPENCODE_CONFIG_CONTENT`" + `, which opencode ranks above the project's
configuration; codex: flags and ` + "`-c`" + ` overrides; gemini: flags, a ` + "`--policy`" + ` file of
rules, and the ` + "`settings.json`" + ` and ` + "`GEMINI.md`" + ` of its per-session home, ` + "`GEMINI_CLI_HOME`" + `), or ` + "`workforce run`" + ` refuses to
start and names the field, the value and the harness. ` + "`--allow-unmapped`" + ` starts it anyway, without the refused values,
with one warning each. ` + "`workforce run --dry-run`" + ` and ` + "`workforce show PERSONA@TIER --harness H`" + ` print the mapping of one
persona.

Permission rules are written in Claude Code's syntax. A deny maps to the narrowest control of the harness that
covers it; when that control covers more (opencode's one ` + "`edit`" + ` permission, codex's read-only sandbox), the table
says so. An allow maps only to a control that grants no more than the rule. opencode evaluates its permission rules
last match first, so workforce writes, in order: what ` + "`permissions.mode`" + ` implies, the allow rules, the deny rules (a deny
wins over an allow, as in Claude Code), then what ` + "`plan`" + ` forbids. gemini's policy rules go by priority: what the mode
denies (300), the allow rules (600), the deny rules (999, the top of the user tier, which your own gemini policies share). A path in a rule is relative to the working directory
(` + "`./x`, `x`" + `) or to the project root (` + "`/x`" + `).

This table is generated from the harness package (` + "`go generate ./harness`" + `), and a test fails when they differ. Each row
maps an example persona holding the value alone (the MCP rows: with a server named ` + "`docs`" + `, stdio). gemini reads its
settings from its home only, so what goes there (the system prompt, the effort, MCP servers) needs the per-session
home every run with a sandbox has, as in the table; ` + "`--install-in-repo`" + ` refuses those values.

`)
	header := func() {
		var hs []string
		for _, h := range persona.Harnesses {
			hs = append(hs, fmt.Sprintf("%s (%s)", h, Measured[h]))
		}
		b.WriteString("| field | value | " + strings.Join(hs, " | ") + " |\n")
		b.WriteString("|---|---|" + strings.Repeat("---|", len(hs)) + "\n")
	}
	header()
	var confined []docExample
	for _, e := range docExamples() {
		row := docRow(e, false)
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		e.o.Confined = true
		if !slices.Equal(docRow(e, true), row) {
			confined = append(confined, e)
		}
	}
	b.WriteString(`
## Inside workforce's write sandbox

` + "`workforce run`" + ` confines the harness on Linux (docs/sandbox.md): it may write its tree, the session's tmp and its
per-session state, nothing else. codex's and claude's own sandboxes (bubblewrap) cannot start inside it, so they are
turned off and workforce's keeps the persona's meaning: what the table above says changes in these rows (the others
map the same); gemini's own sandbox, a container, is turned off too. ` + "`--sandbox=off`" + ` runs the harness as the table above says.

`)
	header()
	for _, e := range append([]docExample{{field: FieldWriteSandbox, value: "on", o: Options{Confined: true}}}, confined...) {
		b.WriteString("| " + strings.Join(docRow(e, true), " | ") + " |\n")
	}
	b.WriteString(`
How each was measured: ` + "`make e2e`" + ` (` + "`e2e/mapping_test.go`" + `) runs each harness at the version above against a scripted
model that records every request, and checks the tools the model is offered, the effort and the model in the request
(` + "`output_config.effort`" + ` for claude, or ` + "`thinking.budget_tokens`" + ` for its models that take no effort, ` + "`reasoning_effort`" + ` for
opencode, ` + "`reasoning.effort`" + ` for codex, ` + "`generationConfig.thinkingConfig`" + ` for gemini) and codex's sandbox against
the persona; the comments of ` + "`harness/claude.go`" + `, ` + "`harness/opencode.go`" + `, ` + "`harness/codex.go`" + ` and ` + "`harness/gemini.go`" + ` record
what each harness was seen to do (gemini's tests: ` + "`e2e/gemini_test.go`" + `).
`)
	b.WriteString(opencodeRankingDoc())
	b.WriteString(NetworkDoc())
	return b.String()
}

// opencodeRankingDoc renders OpencodeRanking for docs/harnesses.md.
func opencodeRankingDoc() string {
	var b strings.Builder
	b.WriteString(`
## opencode's configuration, and the project's

opencode merges its configuration from these sources, each over the ones before it (objects key by key, so an agent
field by field; the lists ` + "`plugin`" + ` and ` + "`instructions`" + ` joined), as read in its source and measured with opencode ` +
		OpencodeRanking.Measured + ` (` + "`e2e/opencode_project_test.go`" + `):

`)
	for i, s := range OpencodeRanking.Sources {
		name := "`" + s.Name + "`"
		switch {
		case s.Workforce:
			name = "**" + name + " (workforce's)**"
		case s.Project:
			name += " (a repository writes these)"
		}
		line := fmt.Sprintf("%d. %s: %s", i+1, name, s.What)
		b.WriteString(line + "\n")
	}
	b.WriteString(`
A repository ranks above ` + "`OPENCODE_CONFIG`" + `, so the persona's agent (and its MCP servers) also go into ` +
		"`OPENCODE_CONFIG_CONTENT`" + `, above every source a repository writes. What it cannot outrank refuses the run, naming
the file and the field: a field of the persona's agent the persona does not set (` + "`disable`" + `, ` + "`temperature`" + `, ` + "`steps`" + `,
` + "`tools`" + `, a prompt or model left to opencode), a permission both give as patterns (merged pattern by pattern in the
project's order, where the last match wins), ` + "`mode.ID`" + `, and plugins (` + "`plugin`" + `, ` + "`.opencode/plugin/`" + `), whose hooks
can rewrite the configuration and the system prompt. The project's top-level ` + "`permission`" + ` is evaluated before the
agent's rules and the project's ` + "`model`" + ` applies only to a persona that leaves the model to opencode; ` + "`instructions`" + `
add files to the system prompt after the persona's prompt, and ` + "`mcp`" + ` servers add tools the persona's rules do not name.
`)
	return b.String()
}

// docRow returns the cells of the row of e in the mapping table: the
// field, the value, and what each harness makes of it.
func docRow(e docExample, confined bool) []string {
	cells := []string{"`" + e.field + "`", "`" + e.value + "`"}
	for _, h := range persona.Harnesses {
		r := e.r
		r.ID, r.Harness = "reviewer", h
		if r.Model == "" {
			switch h {
			case persona.HarnessClaude:
				r.Model = "claude-opus-4-5"
			case persona.HarnessGemini:
				r.Model = "gemini-2.5-pro"
			default:
				r.Model = "gpt-5-mini"
			}
		}
		o := e.o
		o.Confined = confined
		m, err := Map(&r, o)
		var fs []string
		if err != nil {
			fs = append(fs, "error: "+err.Error())
		} else {
			for _, f := range m.Fields {
				if f.Field != e.field {
					continue
				}
				if f.Refused != "" {
					fs = append(fs, "**refused**: "+f.Refused)
				} else {
					fs = append(fs, f.Applied)
				}
			}
		}
		cell := mdCell(dedupe(fs))
		if len(fs) == 0 && e.field != FieldReasoning && strings.HasPrefix(e.field, "harnessSettings.") {
			cell = "— (codex's own setting)"
		} else if len(fs) == 0 && e.field == FieldAgentsMd {
			cell = "— (no budget measured)"
		}
		cells = append(cells, cell)
	}
	return cells
}

// dedupe drops repeated entries (Edit and Write may map to one control).
func dedupe(items []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range items {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// mdCell joins items for a table cell, escaping what markdown tables do
// not take.
func mdCell(items []string) string {
	s := strings.Join(items, "; ")
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
